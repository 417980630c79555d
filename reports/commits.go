package reports

import (
	"context"
	"errors"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/shuffle"
)

// maxCommitBatch bounds the commits of one report message (~100 bytes each
// in JSON: far below the control message limit).
const maxCommitBatch = 4096

// Commit queues commit c of shuffle sh for its coordinator and returns at
// once: a commit waits while the shuffle's previous batch is in flight to
// the coordinator, then goes with every commit that arrived meanwhile, in
// one message.
func (r *Reporter) Commit(sh *shuffle.State, c control.Committed) {
	if r.commits.add(sh, c) {
		r.cfg.Go(func(ctx context.Context) { r.sendCommits(ctx, sh) })
	}
}

// CommitsBusy reports whether commits of sh wait or are being sent to its
// coordinator.
func (r *Reporter) CommitsBusy(sh *shuffle.State) bool { return r.commits.busy(sh) }

// sendCommits reports sh's queued commits to its coordinator, a batch at a
// time, until none is left. A batch is retried like a single report was
// (the tracker takes a repeated commit as the same commit); one that keeps
// failing is logged, and the coordinator learns of its commits in a takeover
// or not at all (the barrier then waits, as it did for a lost report).
func (r *Reporter) sendCommits(ctx context.Context, sh *shuffle.State) {
	for cs := r.commits.take(sh, maxCommitBatch, nil); cs != nil; cs = r.commits.take(sh, maxCommitBatch, nil) {
		c := control.Msg{Op: control.OpCommitted, Shuffle: sh.ID(), Node: r.cfg.Node, Commits: cs}
		err := control.Retry(ctx, 8, func() error { _, err := r.cfg.Request(ctx, sh.Coordinator(), c); return err })
		if err != nil {
			r.cfg.Log.Error("reporting commits failed", "shuffle", sh.ID(), "commits", len(cs), "first_task", cs[0].Task, "err", err)
		}
	}
}

// ReportCommits hands a batch of one receiver's commits (a
// control.OpCommitted message with Commits) to the coordinator, each as
// its own report, and joins their errors.
func ReportCommits(coord Coordinator, co *coordinator.Shuffle, c *control.Msg) error {
	var errs []error
	for i := range c.Commits {
		cm := &c.Commits[i]
		one := control.Msg{Op: control.OpCommitted, Shuffle: c.Shuffle, Node: c.Node, Epoch: cm.Epoch, Task: cm.Task, Attempt: cm.Attempt, Held: &cm.Held, Differs: cm.Differs}
		if err := coord.Report(co, &one); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
