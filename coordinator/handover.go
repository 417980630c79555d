package coordinator

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// HandOver handles control.OpHandOver: node leaves on purpose (a drain)
// and will copy the partitions it committed to their next owners. The
// epoch moves without node as after its loss, but the tracker keeps the
// tasks whose data node committed (barrier.Tracker.HandOver), and the seal
// waits until HandOverEnd: a shuffle sealed already reopens, so reads wait
// for the copy. It returns the new epoch's message (the one every survivor
// is told). Asked again while node hands over, it returns the same epoch
// and moves nothing. The error wraps shuffle.ErrBadInput when node is not
// a live member of sh.
func (cd *Coordinator) HandOver(ctx context.Context, sh *Shuffle, node string) (control.Msg, error) {
	sh.recovering.Lock()
	defer sh.recovering.Unlock()
	c, replay, moved, err := cd.handOverEpoch(sh, node)
	if err != nil || !moved {
		return c, err
	}
	cd.cfg.Log.Info("handover: new epoch without a draining node", "shuffle", sh.ID(), "peer", node, "epoch", c.Epoch, "replay", len(replay))
	cd.announceEpoch(ctx, sh, c)
	return c, nil
}

// handOverEpoch moves sh to the epoch without node for its handover,
// atomically with the tracker; moved is false when node was handing over
// already (c is then the current epoch).
func (cd *Coordinator) handOverEpoch(sh *Shuffle, node string) (c control.Msg, replay []uint64, moved bool, err error) {
	sh.Lock()
	defer sh.Unlock()
	cur := sh.RouteLocked()
	if sh.handovers.Handing(node) {
		return sh.epochMsg(cur, false), nil, false, nil
	}
	if !slices.Contains(cur.Live, node) || node == sh.Self {
		return control.Msg{}, nil, false, fmt.Errorf("%w: shuffle %s: node %s cannot hand over (live %v, coordinator %s)", shuffle.ErrBadInput, sh.ID(), node, cur.Live, sh.Self)
	}
	rt, err := sh.RouteFor(append(slices.Clone(cur.Lost), node))
	if err != nil {
		return control.Msg{}, nil, false, err
	}
	replay, d, err := sh.tracker.HandOver(int(rt.Epoch), node, rt.Live)
	if err != nil {
		return control.Msg{}, nil, false, err
	}
	sh.handovers.Begin(node)
	reopen := sh.moveLocked(rt, d, len(replay))
	if sh.tracker.Phase() == barrier.Sealed && sh.err == nil {
		// Sealed, nothing replays: reads wait for the copy, then the seal
		// is announced again in the new epoch (held until HandOverEnd).
		sh.ReopenLocked()
		sh.reopen()
		sh.afterLoss, reopen = barrier.Decision{Seal: true}, true
	}
	sh.moving = true
	cd.cfg.Node.Forget(sh.ID(), rt.Epoch)
	return sh.epochMsg(rt, reopen), replay, true, nil
}

// epochMsg is the announcement of epoch rt.
func (sh *Shuffle) epochMsg(rt *shuffle.Route, reopen bool) control.Msg {
	return control.Msg{Op: control.OpEpoch, Shuffle: sh.ID(), Epoch: rt.Epoch, Lost: slices.Clone(rt.Lost), Reopen: reopen, Node: sh.Self, Term: rt.Term}
}

// HandOverEnd handles control.OpHandedOver, and a draining node found
// lost before it said it finished: node's handover ends, once. ok: its
// copy is committed at the new owners. !ok: it failed (why), and what the
// node held replays as after its loss (barrier.Tracker.FallBack). A seal
// held back for the handover is decided when none is left. It reports
// whether this call ended the handover.
func (cd *Coordinator) HandOverEnd(sh *Shuffle, node string, ok bool, why string) bool {
	sh.recovering.Lock()
	defer sh.recovering.Unlock()
	sh.Lock()
	e := sh.handovers.End(node, ok)
	var replay []uint64
	var err error
	if e.FallBack {
		replay, err = sh.tracker.FallBack(node)
		sh.replayed += len(replay)
	}
	seal := e.Seal && sh.tracker.Phase() == barrier.Sealed
	sh.Unlock()
	switch {
	case !e.Ended:
		return false
	case err != nil:
		cd.decide(sh, sh.fail(fmt.Errorf("shuffle %s: handover of node %s failed (%s) and its fallback too: %w", sh.ID(), node, why, err)))
		return true
	case e.FallBack:
		cd.cfg.Log.Warn("handover failed: replaying what the node held", "shuffle", sh.ID(), "peer", node, "why", why, "replay", len(replay))
	default:
		cd.cfg.Log.Info("handover finished", "shuffle", sh.ID(), "peer", node)
	}
	if seal {
		cd.decide(sh, barrier.Decision{Seal: true})
	}
	return true
}

// Handing reports whether node hands sh's partitions over now.
func (cd *Coordinator) Handing(sh *Shuffle, node string) bool {
	sh.Lock()
	defer sh.Unlock()
	return sh.handovers.Handing(node)
}
