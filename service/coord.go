package service

import (
	"context"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
)

// coordOf returns sh's coordinator part, or an error if this node is not
// its coordinator.
func (s *Service) coordOf(sh *entry) (*coordinator.Shuffle, error) {
	if sh.coord == nil {
		return nil, fmt.Errorf("%w: node %s is not the coordinator of shuffle %s (%s is)", ErrBadInput, s.Name(), sh.ID(), sh.Coordinator)
	}
	return sh.coord, nil
}

// coordNode is what the coordinator needs of this node.
type coordNode struct{ s *Service }

func (n coordNode) Broadcast(ctx context.Context, nodes []string, m control.Msg) error {
	return n.s.broadcast(ctx, nodes, m)
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
			r, err = s.coord.Status(sh.coord)
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
