package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// coordinator returns sh's coordinator state, or an error if this node is
// not its coordinator.
func (s *Service) coordinator(sh *entry) (*coordState, error) {
	if sh.coord == nil {
		return nil, fmt.Errorf("%w: node %s is not the coordinator of shuffle %s (%s is)", ErrBadInput, s.Name(), sh.ID(), sh.Coordinator)
	}
	return sh.coord, nil
}

// begin handles control.OpBegin: register that node runs (task, attempt).
func (s *Service) begin(sh *entry, c *control.Msg) (control.Reply, error) {
	co, err := s.coordinator(sh)
	if err != nil {
		return control.Reply{}, err
	}
	sh.Lock()
	defer sh.Unlock()
	if _, _, ok := co.tracker.DoneAttempt(c.Task); ok {
		return control.Reply{Status: control.StatusDone}, nil
	}
	if c.Epoch != sh.RouteLocked().Epoch {
		reason := fmt.Sprintf("shuffle %s task %d attempt %d: node %s is at epoch %d, the coordinator at %d", sh.ID(), c.Task, c.Attempt, c.Node, c.Epoch, sh.RouteLocked().Epoch)
		return control.Reply{Status: control.StatusStale, Reason: reason}, nil
	}
	k := shuffle.AttemptKey{Task: c.Task, Attempt: c.Attempt}
	if n, ok := co.begun[k]; ok && n != c.Node {
		reason := fmt.Sprintf("shuffle %s task %d attempt %d was started on node %s; use a new attempt number", sh.ID(), c.Task, c.Attempt, n)
		return control.Reply{Status: control.StatusConflict, Reason: reason}, nil
	}
	co.begun[k] = c.Node
	r := control.Reply{Status: control.StatusOK}
	if e, ok := co.tracker.Undone(c.Task); ok {
		r.Since = uint64(e) + 1
	}
	return r, nil
}

// report handles control.OpDone and control.OpCommitted: feed the tracker, act on its
// decision.
func (s *Service) report(sh *entry, c *control.Msg) error {
	co, err := s.coordinator(sh)
	if err != nil {
		return err
	}
	sh.Lock()
	var d barrier.Decision
	if c.Op == control.OpDone && c.Epoch != sh.RouteLocked().Epoch {
		// The attempt ran against an older ownership: it may have sent data to
		// a lost node. It does not count; its task runs again.
		err = shuffle.Refuse(wire.RefuseStaleEpoch, fmt.Errorf("%w: shuffle %s task %d attempt %d ran in epoch %d, now %d",
			ErrStaleEpoch, sh.ID(), c.Task, c.Attempt, c.Epoch, sh.RouteLocked().Epoch))
	} else if c.Op == control.OpDone {
		d, err = co.tracker.TaskDone(c.Task, c.Attempt, c.Node, c.Sent)
	} else if c.Held != nil {
		d, err = co.tracker.Committed(c.Node, c.Task, c.Attempt, *c.Held)
	} else {
		err = fmt.Errorf("%w: committed report without totals", ErrBadInput)
	}
	sh.Unlock()
	if errors.Is(err, barrier.ErrSealed) {
		return nil // a late duplicate
	}
	s.decide(sh, d)
	return err
}

// decide acts on a tracker decision: tell every member.
func (s *Service) decide(sh *entry, d barrier.Decision) {
	switch {
	case d.Seal:
		s.log.Info("barrier reached", "shuffle", sh.ID())
		s.background(func(ctx context.Context) { s.conclude(ctx, sh, control.Msg{Op: control.OpSeal, Shuffle: sh.ID()}, nil) })
	case d.Fail != nil:
		s.log.Error("shuffle failed", "shuffle", sh.ID(), "err", d.Fail)
		c := control.Msg{Op: control.OpFail, Shuffle: sh.ID(), Reason: d.Fail.Error()}
		s.background(func(ctx context.Context) { s.conclude(ctx, sh, c, d.Fail) })
	}
}

// conclude broadcasts the outcome (seal or fail) and releases barrier waiters.
func (s *Service) conclude(ctx context.Context, sh *entry, c control.Msg, failure error) {
	rt := sh.Route()
	err := control.Retry(ctx, 5, func() error { return s.broadcast(ctx, rt.Live, c) })
	if err != nil && failure == nil {
		if s.awaitEpoch(ctx, sh, rt.Epoch) {
			return // a member was lost meanwhile: the shuffle reopened and will seal again
		}
		failure = fmt.Errorf("shuffle %s: telling members of the seal: %w", sh.ID(), err)
		_ = s.broadcast(ctx, rt.Live, control.Msg{Op: control.OpFail, Shuffle: sh.ID(), Reason: failure.Error()})
	}
	sh.Lock()
	if failure == nil && sh.RouteLocked().Epoch != rt.Epoch {
		sh.Unlock()
		return // sealed an epoch that is gone: the new one seals again
	}
	if failure != nil {
		sh.coord.err = failure
	} else {
		sh.coord.announced = true
		sh.coord.sealAfter = time.Since(sh.Created)
	}
	sh.coord.conclude()
	sh.Unlock()
}

// conclude releases the barrier waiters of the current outcome, once.
// Called with sh.mu held, so that a reopen never races with it.
func (co *coordState) conclude() {
	if !co.concluded {
		co.concluded = true
		close(co.final)
	}
}

// awaitEpoch waits (up to the failure detector's reach) for sh to leave
// epoch: a member that did not take the seal is usually dying.
func (s *Service) awaitEpoch(ctx context.Context, sh *entry, epoch uint64) bool {
	deadline := time.Now().Add(s.cfg.LossWait)
	for time.Now().Before(deadline) {
		if sh.Route().Epoch != epoch {
			return true
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return false
		}
	}
	return false
}

// barrierStatus handles control.OpBarrier: the current outcome, without waiting:
// sealed, failed, or running with the tasks that have no done attempt.
func (s *Service) barrierStatus(sh *entry) (control.Reply, error) {
	co, err := s.coordinator(sh)
	if err != nil {
		return control.Reply{}, err
	}
	sh.Lock()
	defer sh.Unlock()
	select {
	case <-co.final:
		if co.err != nil {
			return control.Reply{}, fmt.Errorf("%w: %s: %w", ErrFailed, sh.ID(), co.err)
		}
		return control.Reply{Status: control.StatusSealed, Epoch: sh.RouteLocked().Epoch, Replayed: co.replayed}, nil
	default:
	}
	return control.Reply{Status: control.StatusRunning, Epoch: sh.RouteLocked().Epoch, Replayed: co.replayed, Replay: co.tracker.Pending()}, nil
}

// BarrierResult is the outcome of a barrier wait that did not fail.
type BarrierResult struct {
	// Sealed: every member holds every task's data; outputs can be read.
	Sealed bool
	// Replay lists tasks without a done attempt (not sealed): with no put in
	// flight, the caller runs each of them again with a new attempt number.
	Replay []uint64
	// Epoch is the shuffle's current epoch (how many nodes were lost).
	Epoch uint64
	// ReplaySet is the number of done tasks that lost nodes took with them
	// (summed over losses): what recovery had to run again.
	ReplaySet int
}

// Barrier waits until the shuffle is sealed on every member, or failed, or
// some task has no done attempt (Replay). Call it once every put has
// returned: a task still being put also counts as pending. Any member may be
// asked; it polls the coordinator.
func (s *Service) Barrier(ctx context.Context, id string) (BarrierResult, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return BarrierResult{}, err
	}
	sh.Touch()
	for {
		var r control.Reply
		if sh.coord != nil {
			r, err = s.barrierStatus(sh)
		} else {
			r, err = s.request(ctx, sh.Coordinator, control.Msg{Op: control.OpBarrier, Shuffle: sh.ID()})
		}
		if err != nil || r.Status == control.StatusSealed || len(r.Replay) > 0 {
			return BarrierResult{Sealed: r.Status == control.StatusSealed, Replay: r.Replay, Epoch: r.Epoch, ReplaySet: r.Replayed}, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return BarrierResult{}, ctx.Err()
		}
	}
}

// Progress is the coordinator's view of a shuffle: the tracker's counters
// and what recovery and the barrier cost.
type Progress struct {
	barrier.Progress
	// ReplaySet is the number of finished tasks that lost nodes took with
	// them, over every loss: the tasks recovery ran again.
	ReplaySet int
	// SealAfter is the time from create to the last announced seal; zero
	// while the shuffle is not sealed.
	SealAfter time.Duration
}

// Progress returns the coordinator's progress of shuffle id (only on its
// coordinator).
func (s *Service) Progress(id string) (Progress, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return Progress{}, err
	}
	co, err := s.coordinator(sh)
	if err != nil {
		return Progress{}, err
	}
	sh.Lock()
	defer sh.Unlock()
	p := Progress{Progress: co.tracker.Progress(), ReplaySet: co.replayed}
	if co.announced {
		p.SealAfter = co.sealAfter
	}
	return p, nil
}
