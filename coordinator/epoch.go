package coordinator

import (
	"context"
	"slices"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Lose is the coordinator's reaction to losing node: the tracker drops
// what node held (its tasks become pending again), the epoch moves, and every
// survivor learns the new ownership. A loss after the seal reopens the
// shuffle the same way: the barrier hands the replay set to the client,
// which runs it before it reads the moved partitions.
func (cd *Coordinator) Lose(ctx context.Context, sh *Shuffle, node string) {
	sh.recovering.Lock() // one loss at a time, in the same order on every node
	defer sh.recovering.Unlock()
	c, replay, err := cd.nextEpoch(sh, node)
	if err != nil {
		cd.cfg.Log.Error("cannot recover", "shuffle", sh.ID(), "peer", node, "err", err)
		cd.decide(sh, sh.fail(err))
		return
	}
	cd.cfg.Log.Warn("node lost: new epoch", "shuffle", sh.ID(), "peer", node, "epoch", c.Epoch, "replay", len(replay))
	cd.announceEpoch(ctx, sh, c)
}

// announceEpoch tells the survivors of sh's new epoch c, then takes the
// decision the move left pending (a loss's or a handover's).
func (cd *Coordinator) announceEpoch(ctx context.Context, sh *Shuffle, c control.Msg) {
	if err := cd.cfg.Node.Broadcast(ctx, otherThan(sh.Route().Live, sh.Self), c); err != nil {
		cd.cfg.Log.Warn("telling survivors of the new epoch", "shuffle", sh.ID(), "epoch", c.Epoch, "err", err)
	}
	sh.Lock()
	d := sh.afterLoss
	sh.afterLoss, sh.moving = barrier.Decision{}, false
	sh.Unlock()
	cd.decide(sh, d)
}

// nextEpoch moves the coordinator to the epoch without node, atomically with
// the tracker, so no report is counted against the wrong receiver set.
func (cd *Coordinator) nextEpoch(sh *Shuffle, node string) (control.Msg, []uint64, error) {
	sh.Lock()
	defer sh.Unlock()
	lost := append(slices.Clone(sh.RouteLocked().Lost), node)
	rt, err := sh.RouteFor(lost)
	if err != nil {
		return control.Msg{}, nil, err
	}
	replay, d, err := sh.lose(rt, node, recovery.Absorbed(sh.Spec.Replicated(), len(lost)))
	if err != nil {
		return control.Msg{}, nil, err
	}
	reopen := sh.moveLocked(rt, d, len(replay))
	sh.moving = true                      // until Lose announced the move
	cd.cfg.Node.Forget(sh.ID(), rt.Epoch) // puts of the old epoch fail with ErrStaleEpoch and run again
	return control.Msg{Op: control.OpEpoch, Shuffle: sh.ID(), Epoch: rt.Epoch, Lost: lost, Reopen: reopen, Node: sh.Self, Term: rt.Term}, replay, nil
}

// lose tells the tracker that node is gone from rt's epoch on and returns
// the replay set the tracker chose. excused: every shard the node held has
// a copy on a survivor, which now serves it: nothing to replay. Called with
// the shuffle's lock held.
func (sh *Shuffle) lose(rt *shuffle.Route, node string, excused bool) ([]uint64, barrier.Decision, error) {
	if excused {
		d, err := sh.tracker.Excuse(int(rt.Epoch), node, rt.Live)
		return nil, d, err
	}
	return sh.tracker.Lose(int(rt.Epoch), node, rt.Live)
}

// moveLocked makes rt the current route after the tracker took the loss,
// reopens what the loss undid and keeps d for Lose to act on after the
// broadcast. It reports whether the shuffle reopened. Called with the
// shuffle's lock held.
func (sh *Shuffle) moveLocked(rt *shuffle.Route, d barrier.Decision, replayed int) bool {
	sh.SetRouteLocked(rt)
	reopen := sh.tracker.Phase() == barrier.Running
	if reopen {
		sh.ReopenLocked()
		sh.reopen()
	}
	if sh.resealAfterLoss() {
		d = barrier.Decision{Seal: true}
	}
	sh.afterLoss = d
	sh.replayed += replayed
	return reopen
}

// resealAfterLoss reports whether a loss left the seal standing (nothing
// to replay) before every member was told of it: the announcement in the
// old epoch may have missed the lost node, and conclude leaves a superseded
// epoch alone, so the seal must be announced again in the new one.
// Called with the shuffle's lock held.
func (sh *Shuffle) resealAfterLoss() bool {
	return recovery.Reseal(sh.tracker.Phase() == barrier.Sealed, sh.announced, sh.err != nil)
}

// ApplyEpoch handles control.OpEpoch on a member (every member, the
// receiving end of Lose's broadcast): adopt the newer routing. An epoch of
// an older term than this node's is refused (shuffle.ErrStaleTerm).
func (cd *Coordinator) ApplyEpoch(sh *shuffle.State, c *control.Msg) error {
	if err := sh.CheckMove(c.Op, c.Node, c.Term, c.Lost, c.Epoch); err != nil {
		return err
	}
	sh.Lock()
	if !recovery.Adopt(sh.RouteLocked().Epoch, c.Epoch) {
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
		cd.cfg.Node.Forget(sh.ID(), c.Epoch)
		cd.cfg.Log.Info("new epoch", "shuffle", sh.ID(), "epoch", c.Epoch, "lost", c.Lost)
	}
	return err
}

// reopen forgets an outcome the tracker took back (a loss reopened it):
// barrier waiters wait for the next one. Called with the shuffle's lock held.
func (sh *Shuffle) reopen() {
	if !sh.concluded {
		return
	}
	sh.final = make(chan struct{})
	sh.concluded, sh.announced = false, false
}

// fail records an outcome of failure for the coordinator to broadcast.
func (sh *Shuffle) fail(err error) (d barrier.Decision) {
	sh.Lock()
	defer sh.Unlock()
	return sh.tracker.Fail(err)
}

func otherThan(nodes []string, self string) []string {
	return slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == self })
}
