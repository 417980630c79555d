package service

import (
	"context"
	"errors"
	"sync"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/shuffle"
)

// maxCommitBatch bounds the commits of one report message (~100 bytes each
// in JSON: far below the control message limit).
const maxCommitBatch = 4096

// commitReports batches a receiver's commit reports per shuffle: a commit
// waits while the shuffle's previous batch is in flight to the coordinator,
// then goes with every commit that arrived meanwhile, in one message. So a
// node that commits the tasks of a 10,000-task shuffle sends as many reports
// as the coordinator's round trips allow, not one per (task, receiver), and
// a report is never later than one round trip behind its commit.
type commitReports struct {
	mu      sync.Mutex
	pending map[*shuffle.State][]control.Committed // not yet sent
	sending map[*shuffle.State]bool                // a sender goroutine runs
}

// add queues c for sh and reports whether the caller must start the
// shuffle's sender (none runs).
func (q *commitReports) add(sh *shuffle.State, c control.Committed) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending, q.sending = map[*shuffle.State][]control.Committed{}, map[*shuffle.State]bool{}
	}
	q.pending[sh] = append(q.pending[sh], c)
	if q.sending[sh] {
		return false
	}
	q.sending[sh] = true
	return true
}

// take returns up to maxCommitBatch of sh's queued commits; when none
// is left it returns nil and marks the shuffle's sender stopped.
func (q *commitReports) take(sh *shuffle.State) []control.Committed {
	q.mu.Lock()
	defer q.mu.Unlock()
	cs := q.pending[sh]
	if len(cs) == 0 {
		delete(q.pending, sh)
		delete(q.sending, sh)
		return nil
	}
	n := min(len(cs), maxCommitBatch)
	if n == len(cs) {
		delete(q.pending, sh)
	} else {
		q.pending[sh] = cs[n:]
	}
	return cs[:n:n]
}

// sendCommits reports sh's queued commits to its coordinator, a batch at a
// time, until none is left. A batch is retried like a single report was
// (the tracker takes a repeated commit as the same commit); one that keeps
// failing is logged, and the coordinator learns of its commits in a takeover
// or not at all (the barrier then waits, as it did for a lost report).
func (s *Service) sendCommits(ctx context.Context, sh *shuffle.State) {
	for cs := s.commits.take(sh); cs != nil; cs = s.commits.take(sh) {
		c := control.Msg{Op: control.OpCommitted, Shuffle: sh.ID(), Node: s.Name(), Commits: cs}
		err := control.Retry(ctx, 8, func() error { _, err := s.request(ctx, sh.Coordinator(), c); return err })
		if err != nil {
			s.log.Error("reporting commits failed", "shuffle", sh.ID(), "commits", len(cs), "first_task", cs[0].Task, "err", err)
		}
	}
}

// reportCommits hands a batch of one receiver's commits to the coordinator,
// each as its own report, and joins their errors.
func (s *Service) reportCommits(co *coordinator.Shuffle, c *control.Msg) error {
	var errs []error
	for i := range c.Commits {
		cm := &c.Commits[i]
		one := control.Msg{Op: control.OpCommitted, Shuffle: c.Shuffle, Node: c.Node, Epoch: cm.Epoch, Task: cm.Task, Attempt: cm.Attempt, Held: &cm.Held, Differs: cm.Differs}
		if err := s.coord.Report(co, &one); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
