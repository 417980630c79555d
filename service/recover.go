package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/dht"
)

// watch follows membership events for as long as the service runs: a
// member that fails or leaves is lost to every shuffle it belongs to.
func (s *Service) watch(events <-chan dht.Event, stop func()) {
	s.background(func(ctx context.Context) {
		defer stop()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				if e.Kind == dht.MemberFail || e.Kind == dht.MemberLeave {
					s.memberLost(ctx, e.Member.Name)
				}
			case <-ctx.Done():
				return
			}
		}
	})
}

// memberLost handles the loss of node in every open shuffle: shuffles it
// coordinated fail (there is no coordinator failover yet); shuffles this
// node coordinates move to a new epoch without it.
func (s *Service) memberLost(ctx context.Context, node string) {
	s.log.Warn("member lost", "peer", node)
	s.mu.RLock()
	shuffles := make([]*entry, 0, len(s.shuffles))
	for _, sh := range s.shuffles {
		shuffles = append(shuffles, sh)
	}
	s.mu.RUnlock()
	for _, sh := range shuffles {
		switch {
		case sh.Coordinator == node:
			err := fmt.Errorf("coordinator %s was lost (coordinator failover is not implemented: run the shuffle again)", node)
			sh.Finish(Failed, err)
			s.split.Forget(sh.ID())
		case sh.coord != nil && slices.Contains(sh.Route().Live, node):
			s.recover(ctx, sh, node)
		}
	}
}

// recover is the coordinator's reaction to losing node: the tracker drops
// what node held (its tasks become pending again), the epoch moves, and every
// survivor learns the new ownership. A loss after the seal reopens the
// shuffle the same way: the barrier hands the replay set to the client,
// which runs it before it reads the moved partitions.
func (s *Service) recover(ctx context.Context, sh *entry, node string) {
	sh.coord.recovering.Lock() // one loss at a time, in the same order on every node
	defer sh.coord.recovering.Unlock()
	c, replay, err := s.nextEpoch(sh, node)
	if err != nil {
		s.log.Error("cannot recover", "shuffle", sh.ID(), "peer", node, "err", err)
		s.decide(sh, sh.coord.fail(sh, err))
		return
	}
	s.log.Warn("node lost: new epoch", "shuffle", sh.ID(), "peer", node, "epoch", c.Epoch, "replay", len(replay))
	if err := s.broadcast(ctx, otherThan(sh.Route().Live, s.Name()), c); err != nil {
		s.log.Warn("telling survivors of the new epoch", "shuffle", sh.ID(), "epoch", c.Epoch, "err", err)
	}
	sh.Lock()
	d := sh.coord.afterLoss
	sh.coord.afterLoss = barrierDecision{}
	sh.Unlock()
	s.decide(sh, d)
}

// nextEpoch moves the coordinator to the epoch without node, atomically with
// the tracker, so no report is counted against the wrong receiver set.
func (s *Service) nextEpoch(sh *entry, node string) (control.Msg, []uint64, error) {
	sh.Lock()
	defer sh.Unlock()
	lost := append(slices.Clone(sh.RouteLocked().Lost), node)
	excused := sh.Spec.Replicated() && len(lost) == 1
	rt, err := sh.RouteFor(lost)
	if err != nil {
		return control.Msg{}, nil, err
	}
	var replay []uint64
	var d barrierDecision
	if excused {
		// Every shard the node held has a copy on a survivor, which now
		// serves it: nothing to replay.
		d, err = sh.coord.tracker.Excuse(int(rt.Epoch), node, rt.Live)
	} else {
		replay, d, err = sh.coord.tracker.Lose(int(rt.Epoch), node, rt.Live)
	}
	if err != nil {
		return control.Msg{}, nil, err
	}
	sh.SetRouteLocked(rt)
	reopen := sh.coord.tracker.Phase() == barrier.Running
	if reopen {
		sh.ReopenLocked()
		sh.coord.reopen()
	}
	if sh.coord.resealAfterLoss() {
		d = barrierDecision{Seal: true}
	}
	sh.coord.afterLoss = d
	sh.coord.replayed += len(replay)
	s.split.Forget(sh.ID()) // puts of the old epoch fail with ErrStaleEpoch and run again
	return control.Msg{Op: control.OpEpoch, Shuffle: sh.ID(), Epoch: rt.Epoch, Lost: lost, Reopen: reopen}, replay, nil
}

// resealAfterLoss reports whether a loss left the seal standing (nothing
// to replay) before every member was told of it: the announcement in the
// old epoch may have missed the lost node, and conclude leaves a superseded
// epoch alone, so the seal must be announced again in the new one.
// Called with sh.mu held.
func (co *coordState) resealAfterLoss() bool {
	return co.tracker.Phase() == barrier.Sealed && !co.announced && co.err == nil
}

// applyEpoch handles control.OpEpoch on a member: adopt the newer routing.
func (s *Service) applyEpoch(sh *entry, c *control.Msg) error {
	if uint64(len(c.Lost)) != c.Epoch {
		return fmt.Errorf("%w: epoch %d with %d lost nodes", ErrBadInput, c.Epoch, len(c.Lost))
	}
	if slices.Contains(c.Lost, s.Name()) {
		err := fmt.Errorf("this node was declared lost in epoch %d", c.Epoch)
		sh.Finish(Failed, err)
		return err
	}
	sh.Lock()
	if c.Epoch <= sh.RouteLocked().Epoch {
		sh.Unlock()
		return nil // already there
	}
	rt, err := sh.RouteFor(c.Lost)
	if err == nil {
		sh.SetRouteLocked(rt)
		if c.Reopen {
			sh.ReopenLocked()
		}
	}
	sh.Unlock()
	if err == nil {
		s.split.Forget(sh.ID())
		s.log.Info("new epoch", "shuffle", sh.ID(), "epoch", c.Epoch, "lost", c.Lost)
	}
	return err
}

// reopen forgets an outcome the tracker took back (a loss reopened it):
// barrier waiters wait for the next one. Called with sh.mu held.
func (co *coordState) reopen() {
	if !co.concluded {
		return
	}
	co.final = make(chan struct{})
	co.concluded, co.announced = false, false
}

// fail records an outcome of failure for the coordinator to broadcast.
func (co *coordState) fail(sh *entry, err error) (d barrierDecision) {
	sh.Lock()
	defer sh.Unlock()
	return co.tracker.Fail(err)
}

func otherThan(nodes []string, self string) []string {
	return slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == self })
}
