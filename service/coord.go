package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
)

// Replies of the coordinator to begin and barrier requests.
const (
	statusOK       = "ok"
	statusDone     = "done"     // begin: the task already has a done attempt
	statusConflict = "conflict" // begin: the attempt runs on another node
	statusRunning  = "running"  // barrier: not reached yet
	statusSealed   = "sealed"   // barrier: reached
)

// coordinator returns sh's coordinator state, or an error if this node is
// not its coordinator.
func (s *Service) coordinator(sh *shuffle) (*coordState, error) {
	if sh.coord == nil {
		return nil, fmt.Errorf("%w: node %s is not the coordinator of shuffle %s (%s is)", ErrBadInput, s.Name(), sh.id(), sh.coordinator)
	}
	return sh.coord, nil
}

// begin handles opBegin: register that node runs (task, attempt).
func (s *Service) begin(sh *shuffle, c *control) (controlReply, error) {
	co, err := s.coordinator(sh)
	if err != nil {
		return controlReply{}, err
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, _, ok := co.tracker.DoneAttempt(c.Task); ok {
		return controlReply{Status: statusDone}, nil
	}
	k := attemptKey{c.Task, c.Attempt}
	if n, ok := co.begun[k]; ok && n != c.Node {
		reason := fmt.Sprintf("shuffle %s task %d attempt %d was started on node %s; use a new attempt number", sh.id(), c.Task, c.Attempt, n)
		return controlReply{Status: statusConflict, Reason: reason}, nil
	}
	co.begun[k] = c.Node
	return controlReply{Status: statusOK}, nil
}

// report handles opDone and opCommitted: feed the tracker, act on its
// decision.
func (s *Service) report(sh *shuffle, c *control) error {
	co, err := s.coordinator(sh)
	if err != nil {
		return err
	}
	sh.mu.Lock()
	var d barrier.Decision
	if c.Op == opDone {
		d, err = co.tracker.TaskDone(c.Task, c.Attempt, c.Node, c.Sent)
	} else if c.Held != nil {
		d, err = co.tracker.Committed(c.Node, c.Task, c.Attempt, *c.Held)
	} else {
		err = fmt.Errorf("%w: committed report without totals", ErrBadInput)
	}
	sh.mu.Unlock()
	if errors.Is(err, barrier.ErrSealed) {
		return nil // a late duplicate
	}
	s.decide(sh, d)
	return err
}

// decide acts on a tracker decision: tell every member.
func (s *Service) decide(sh *shuffle, d barrier.Decision) {
	switch {
	case d.Seal:
		s.log.Info("barrier reached", "shuffle", sh.id())
		s.background(func(ctx context.Context) { s.conclude(ctx, sh, control{Op: opSeal, Shuffle: sh.id()}, nil) })
	case d.Fail != nil:
		s.log.Error("shuffle failed", "shuffle", sh.id(), "err", d.Fail)
		c := control{Op: opFail, Shuffle: sh.id(), Reason: d.Fail.Error()}
		s.background(func(ctx context.Context) { s.conclude(ctx, sh, c, d.Fail) })
	}
}

// conclude broadcasts the outcome (seal or fail) and releases barrier waiters.
func (s *Service) conclude(ctx context.Context, sh *shuffle, c control, failure error) {
	err := s.retry(ctx, 5, func() error { return s.broadcast(ctx, sh.members, c) })
	if err != nil && failure == nil {
		failure = fmt.Errorf("shuffle %s: telling members of the seal: %w", sh.id(), err)
		_ = s.broadcast(ctx, sh.members, control{Op: opFail, Shuffle: sh.id(), Reason: failure.Error()})
	}
	sh.coord.err = failure
	close(sh.coord.final)
}

// barrierStatus handles opBarrier: the current outcome, without waiting.
func (s *Service) barrierStatus(sh *shuffle) (controlReply, error) {
	co, err := s.coordinator(sh)
	if err != nil {
		return controlReply{}, err
	}
	select {
	case <-co.final:
		if co.err != nil {
			return controlReply{}, fmt.Errorf("%w: %s: %w", ErrFailed, sh.id(), co.err)
		}
		return controlReply{Status: statusSealed}, nil
	default:
		return controlReply{Status: statusRunning}, nil
	}
}

// Barrier waits until the shuffle is sealed on every member, or failed.
// Any member may be asked; it polls the coordinator.
func (s *Service) Barrier(ctx context.Context, id string) error {
	sh, err := s.lookup(id)
	if err != nil {
		return err
	}
	if sh.coord != nil {
		select {
		case <-sh.coord.final:
			return s.barrierOutcome(sh)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.pollBarrier(ctx, sh)
}

func (s *Service) barrierOutcome(sh *shuffle) error {
	if sh.coord.err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFailed, sh.id(), sh.coord.err)
	}
	return nil
}

// pollBarrier asks the coordinator for the outcome until there is one.
func (s *Service) pollBarrier(ctx context.Context, sh *shuffle) error {
	for {
		r, err := s.control(ctx, sh.coordinator, control{Op: opBarrier, Shuffle: sh.id()})
		if err != nil || r.Status == statusSealed {
			return err
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Progress is the coordinator's view of a shuffle.
type Progress = barrier.Progress

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
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return co.tracker.Progress(), nil
}
