package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Begin handles control.OpBegin: register that node runs (task, attempt).
func (cd *Coordinator) Begin(sh *Shuffle, c *control.Msg) (control.Reply, error) {
	sh.Lock()
	defer sh.Unlock()
	if _, _, ok := sh.tracker.DoneAttempt(c.Task); ok {
		return control.Reply{Status: control.StatusDone}, nil
	}
	if c.Epoch != sh.RouteLocked().Epoch {
		reason := fmt.Sprintf("shuffle %s task %d attempt %d: node %s is at epoch %d, the coordinator at %d", sh.ID(), c.Task, c.Attempt, c.Node, c.Epoch, sh.RouteLocked().Epoch)
		return control.Reply{Status: control.StatusStale, Reason: reason}, nil
	}
	k := shuffle.AttemptKey{Task: c.Task, Attempt: c.Attempt}
	if n, ok := sh.begun[k]; ok && n != c.Node {
		reason := fmt.Sprintf("shuffle %s task %d attempt %d was started on node %s; use a new attempt number", sh.ID(), c.Task, c.Attempt, n)
		return control.Reply{Status: control.StatusConflict, Reason: reason}, nil
	}
	sh.begun[k] = c.Node
	r := control.Reply{Status: control.StatusOK}
	if e, ok := sh.tracker.Undone(c.Task); ok {
		r.Since = uint64(e) + 1
	}
	return r, nil
}

// Report handles control.OpDone and control.OpCommitted: feed the tracker,
// act on its decision. A report of a done attempt of an older epoch is
// refused (ErrStaleEpoch): its task runs again.
func (cd *Coordinator) Report(sh *Shuffle, c *control.Msg) error {
	if cd.replayDiffers(sh, c) {
		return nil
	}
	sh.Lock()
	d, err := sh.record(c)
	sh.Unlock()
	if errors.Is(err, barrier.ErrSealed) {
		return nil // a late duplicate
	}
	cd.decide(sh, d)
	return err
}

// record feeds one report to the tracker. Called with the shuffle's lock
// held, so the epoch check and the tracker see the same epoch.
func (sh *Shuffle) record(c *control.Msg) (barrier.Decision, error) {
	switch {
	case c.Op == control.OpDone && c.Epoch != sh.RouteLocked().Epoch:
		// The attempt ran against an older ownership: it may have sent data to
		// a lost node. It does not count; its task runs again.
		return barrier.Decision{}, shuffle.Refuse(wire.RefuseStaleEpoch, fmt.Errorf("%w: shuffle %s task %d attempt %d ran in epoch %d, now %d",
			shuffle.ErrStaleEpoch, sh.ID(), c.Task, c.Attempt, c.Epoch, sh.RouteLocked().Epoch))
	case c.Op == control.OpDone:
		return sh.tracker.TaskDone(c.Task, c.Attempt, c.Node, c.Sent)
	case c.Held != nil:
		return sh.tracker.Committed(c.Node, c.Task, c.Attempt, *c.Held)
	}
	return barrier.Decision{}, fmt.Errorf("%w: committed report without totals", shuffle.ErrBadInput)
}

// Abort fails sh for a reason a member found that the shuffle cannot go
// past (its spill disk is full): every member is told, barrier waiters
// get the error. A shuffle already sealed or failed is left as it is.
func (cd *Coordinator) Abort(sh *Shuffle, reason error) {
	cd.decide(sh, sh.fail(reason))
}

// AbortFrom handles control.OpAbort: member c.Node cannot go on with sh
// (its spill disk failed), and sh fails for it (Abort). A message from a
// node that is not one of sh's members is refused as a bad request.
func (cd *Coordinator) AbortFrom(sh *Shuffle, c *control.Msg) error {
	if !slices.Contains(sh.Members, c.Node) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s: abort from node %s, not one of its members", sh.ID(), c.Node))
	}
	cd.Abort(sh, fmt.Errorf("node %s cannot go on: %s", c.Node, c.Reason))
	return nil
}

// decide acts on a tracker decision: tell every member.
func (cd *Coordinator) decide(sh *Shuffle, d barrier.Decision) {
	switch {
	case d.Seal:
		rt, held := sh.sealRoute()
		if held {
			cd.cfg.Log.Info("barrier reached: seal held until the handovers finish", "shuffle", sh.ID())
			return
		}
		cd.cfg.Log.Info("barrier reached", "shuffle", sh.ID())
		c := sh.decision(control.OpSeal, "")
		c.Epoch = rt.Epoch // a member that moved on refuses it (shuffle.State.CheckSeal)
		cd.cfg.Node.Go(func(ctx context.Context) { cd.conclude(ctx, sh, rt, c, nil) })
	case d.Fail != nil:
		cd.cfg.Log.Error("shuffle failed", "shuffle", sh.ID(), "err", d.Fail)
		c := sh.decision(control.OpFail, d.Fail.Error())
		if errors.Is(d.Fail, shuffle.ErrReplayDiffers) {
			c.Differs = d.Fail.Error() // members' answers say so too (Msg.Differs)
		}
		rt := sh.Route()
		cd.cfg.Node.Go(func(ctx context.Context) { cd.conclude(ctx, sh, rt, c, d.Fail) })
	}
}

// sealRoute returns the route of the epoch a seal decided now is announced
// in; held is true when the seal waits for a handover instead (remembered
// for HandOverEnd). Both are read under one lock: a handover that starts
// after the decision moves the epoch (and reopens the shuffle), and a seal
// announced in that epoch by a late conclude sealed the members while the
// handover ran; when it then fell back, the tasks it replayed were refused
// as sealed for good.
func (sh *Shuffle) sealRoute() (rt *shuffle.Route, held bool) {
	sh.Lock()
	defer sh.Unlock()
	if sh.handovers.Hold() {
		return nil, true
	}
	return sh.RouteLocked(), false
}

// decision is a seal or fail message of sh's coordinator, signed with its
// node and term: members refuse those of an older term.
func (sh *Shuffle) decision(op, reason string) control.Msg {
	return control.Msg{Op: op, Shuffle: sh.ID(), Node: sh.Self, Term: sh.Term(), Reason: reason}
}

// announceTries is the fewest times the coordinator tells one member an
// outcome before it gives up on it (backing off from 20 ms to 1.28 s: ~2.5 s
// in all), however short LossWait is.
const announceTries = 8

// conclude broadcasts the outcome (seal or fail) decided in rt's epoch to
// its members and releases barrier waiters. A seal is not announced once
// the epoch has moved on: the new epoch seals again.
func (cd *Coordinator) conclude(ctx context.Context, sh *Shuffle, rt *shuffle.Route, c control.Msg, failure error) {
	err := cd.announce(ctx, sh, rt, c)
	if err != nil && failure == nil {
		if sh.Route().Epoch != rt.Epoch {
			return // a member was lost meanwhile: the shuffle reopened and will seal again
		}
		failure = fmt.Errorf("shuffle %s: telling members of the seal: %w", sh.ID(), err)
		_ = cd.cfg.Node.Broadcast(ctx, rt.Live, sh.decision(control.OpFail, failure.Error()))
	}
	sh.Lock()
	if failure == nil && sh.RouteLocked().Epoch != rt.Epoch {
		sh.Unlock()
		return // sealed an epoch that is gone: the new one seals again
	}
	if failure != nil {
		sh.err = failure
	} else {
		sh.announced = true
		sh.sealAfter = time.Since(sh.Created)
	}
	sh.releaseWaiters()
	sh.Unlock()
}

// announce tells every member of rt c, each with retries of its own: a
// member that took it is not asked again, and one lost frame does not cost
// the others a round. A member is asked again for as long as it is one: until
// the epoch moves on (the failure detector found it lost, and the shuffle
// reopens) or the detector has had LossWait to do so, and at least
// announceTries times. A seal is not sent at all once the epoch moved on.
// A fixed number of tries alone would fail a whole shuffle on a lossy
// network whose members are all alive.
func (cd *Coordinator) announce(ctx context.Context, sh *Shuffle, rt *shuffle.Route, c control.Msg) error {
	deadline := cd.cfg.Clock.Now().Add(cd.cfg.LossWait)
	errs := make([]error, len(rt.Live))
	var wg sync.WaitGroup
	for i, n := range rt.Live {
		tries := 0
		member := func() bool {
			tries++
			return sh.Route().Epoch == rt.Epoch && (tries < announceTries || cd.cfg.Clock.Now().Before(deadline))
		}
		wg.Go(func() {
			errs[i] = control.RetryWhile(ctx, member, func() error {
				if c.Op == control.OpSeal && sh.Route().Epoch != rt.Epoch {
					return errEpochMoved // a member would seal in the new epoch
				}
				return cd.cfg.Node.Broadcast(ctx, []string{n}, c)
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// errEpochMoved stops the announcement of a seal whose epoch has moved on.
var errEpochMoved = errors.New("coordinator: the epoch moved on before the seal was announced")

// releaseWaiters releases the barrier waiters of the current outcome, once.
// Called with the shuffle's lock held, so that a reopen never races with it.
func (sh *Shuffle) releaseWaiters() {
	if !sh.concluded {
		sh.concluded = true
		close(sh.final)
	}
}

// Status handles control.OpBarrier: the current outcome, without waiting:
// sealed, failed, or running with the tasks that have no done attempt
// (none while an epoch move is being announced: ask again).
func (cd *Coordinator) Status(sh *Shuffle) (control.Reply, error) {
	sh.Lock()
	defer sh.Unlock()
	select {
	case <-sh.final:
		if sh.err != nil {
			return control.Reply{}, fmt.Errorf("%w: %s: %w", shuffle.ErrFailed, sh.ID(), sh.err)
		}
		return control.Reply{Status: control.StatusSealed, Epoch: sh.RouteLocked().Epoch, Replayed: sh.replayed}, nil
	default:
	}
	if err := sh.tracker.Err(); err != nil { // failed, its broadcast (conclude) still under way
		return control.Reply{}, fmt.Errorf("%w: %s: %w", shuffle.ErrFailed, sh.ID(), err)
	}
	r := control.Reply{Status: control.StatusRunning, Epoch: sh.RouteLocked().Epoch, Replayed: sh.replayed}
	if !sh.moving {
		r.Replay = sh.tracker.Pending()
	}
	return r, nil
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

// Progress returns the coordinator's progress of sh.
func (cd *Coordinator) Progress(sh *Shuffle) Progress {
	sh.Lock()
	defer sh.Unlock()
	p := Progress{Progress: sh.tracker.Progress(), ReplaySet: sh.replayed}
	if sh.announced {
		p.SealAfter = sh.sealAfter
	}
	return p
}

// TasksDone is the number of tasks with a done attempt.
func (cd *Coordinator) TasksDone(sh *Shuffle) int {
	sh.Lock()
	defer sh.Unlock()
	return sh.tracker.Progress().TasksDone
}
