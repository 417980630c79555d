package service

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/seal"
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

// BarrierResult is the outcome of a barrier wait that did not fail
// (package seal).
type BarrierResult = seal.Result

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
	return s.seals.Wait(ctx, sh.State, seal.Ask{
		Poll:     func(ctx context.Context) (control.Reply, error) { return s.barrierPoll(ctx, sh) },
		NoQuorum: func() error { return s.quorumErr(sh) },
	})
}

// newWaiter builds the node's barrier waits.
func (s *Service) newWaiter() *seal.Waiter {
	return seal.New(seal.Config{Unavailable: ErrUnavailable, LossWait: s.cfg.LossWait, Clock: s.cfg.Clock})
}

// barrierPoll asks sh's current coordinator for the barrier's state.
func (s *Service) barrierPoll(ctx context.Context, sh *entry) (control.Reply, error) {
	if co := sh.coordPart(); co != nil {
		return s.coord.Status(co)
	}
	return s.request(ctx, sh.Coordinator(), control.Msg{Op: control.OpBarrier, Shuffle: sh.ID()})
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
