package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// coordOf returns sh's coordinator part, or an error if this node is not
// its coordinator (yet: it may be taking over, or the sender may follow a
// newer term than this node): ErrUnavailable, refused so that the sender
// asks again, or runs its task again.
func (s *Service) coordOf(sh *entry) (*coordinator.Shuffle, error) {
	if co := sh.coordPart(); co != nil {
		return co, nil
	}
	rt := sh.Route()
	why := fmt.Sprintf("%s is, in term %d", rt.Coordinator, rt.Term)
	if rt.Coordinator == s.Name() {
		why = fmt.Sprintf("it is taking over in term %d", rt.Term)
	}
	return nil, shuffle.Refuse(wire.RefuseClosing, fmt.Errorf("%w: node %s does not coordinate shuffle %s (%s)", ErrUnavailable, s.Name(), sh.ID(), why))
}

// coordNode is what the coordinator needs of this node.
type coordNode struct{ s *Service }

func (n coordNode) Broadcast(ctx context.Context, nodes []string, m control.Msg) error {
	err := n.s.broadcast(ctx, nodes, m)
	n.s.fo.NoteRefused(m.Shuffle, err)
	return err
}
func (n coordNode) Go(fn func(ctx context.Context)) { n.s.background(fn) }
func (n coordNode) Forget(id string, epoch uint64)  { n.s.split.ForgetBefore(id, epoch) }

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
// asked; it polls the coordinator, and while the coordinator cannot be
// reached (it was lost and its successor is taking over) it keeps asking,
// the current coordinator each time, for up to Config.LossWait. A node that
// sees the coordinator down and too few members up for a takeover
// (package recovery) answers at once with an error wrapping ErrUnavailable and
// ErrNoQuorum: nobody on its side will replace the coordinator.
func (s *Service) Barrier(ctx context.Context, id string) (BarrierResult, error) {
	sh, err := s.clientLookup(ctx, id)
	if err != nil {
		return BarrierResult{}, err
	}
	sh.Touch()
	var lostSince time.Time
	for {
		r, err := s.barrierPoll(ctx, sh)
		if qerr := s.quorumErr(sh); qerr != nil && err != nil {
			return BarrierResult{}, qerr // nobody on this side will replace the coordinator
		}
		if errors.Is(err, wire.ErrBusy) {
			r, err = control.Reply{}, nil // the coordinator asks for a pause (it may be closing): ask again
		}
		if s.awaitSuccessor(ctx, sh, err, &lostSince) {
			r, err = control.Reply{}, nil // ask again: the coordinator is being replaced
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

// barrierPoll asks sh's current coordinator for the barrier's state.
func (s *Service) barrierPoll(ctx context.Context, sh *entry) (control.Reply, error) {
	if co := sh.coordPart(); co != nil {
		return s.coord.Status(co)
	}
	return s.request(ctx, sh.Coordinator(), control.Msg{Op: control.OpBarrier, Shuffle: sh.ID()})
}

// awaitSuccessor reports whether a barrier poll that failed with err should
// be asked again: the coordinator was unreachable (since *since, which it
// sets and resets) for less than Config.LossWait.
func (s *Service) awaitSuccessor(ctx context.Context, sh *entry, err error, since *time.Time) bool {
	if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil || sh.failed() {
		*since = time.Time{}
		return false
	}
	if since.IsZero() {
		*since = s.cfg.Clock.Now()
	}
	return clock.Since(s.cfg.Clock, *since) < s.cfg.LossWait
}

// failed reports whether the shuffle failed on this node.
func (sh *entry) failed() bool {
	ph, _ := sh.Status()
	return ph == Failed
}

// Progress is the coordinator's view of a shuffle: the tracker's counters
// and what recovery and the barrier cost.
type Progress = coordinator.Progress

// Progress returns the coordinator's progress of shuffle id (only on its
// coordinator).
func (s *Service) Progress(id string) (Progress, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return Progress{}, err
	}
	co, err := s.coordOf(sh)
	if err != nil {
		return Progress{}, err
	}
	return s.coord.Progress(co), nil
}
