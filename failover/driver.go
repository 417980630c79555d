package failover

import (
	"context"
	"time"

	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Watch follows membership events for as long as the service runs: a
// member that fails or leaves is lost to every shuffle it belongs to.
func (s *Driver) Watch(events <-chan member.Event, stop func()) {
	s.background(func(ctx context.Context) {
		defer stop()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				s.memberEvent(ctx, e)
			case <-ctx.Done():
				return
			}
		}
	})
}

// memberEvent keeps the set of members seen down and reacts to a loss.
func (s *Driver) memberEvent(ctx context.Context, e member.Event) {
	s.mu.Lock()
	if s.down == nil {
		s.down = map[string]bool{}
	}
	lost := e.Kind == member.Failed || e.Kind == member.Left
	back := !lost && s.down[e.Member.Name]
	s.down[e.Member.Name] = lost
	s.mu.Unlock()
	s.host.NoteMember(e.Member)
	switch {
	case lost:
		s.memberLost(ctx, e.Member.Name)
	case back: // a successor or coordinator without quorum may have one again;
		// shuffles may have moved on without this node (rejoin.go)
		s.failoverAll(ctx)
		s.recheckSoon()
	}
}

// isDown reports whether node was seen failed or gone (and not back since).
func (s *Driver) isDown(node string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.down[node]
}

// memberLost handles the loss of node in every open shuffle it belongs to:
// a shuffle this node coordinates moves to a new epoch without it; a
// shuffle whose coordinator is down is taken over by this node if it is the
// first live candidate (see failover.go); others wait for their
// coordinator's word.
func (s *Driver) memberLost(ctx context.Context, node string) {
	s.log.Warn("member lost", "peer", node)
	s.failoverAll(ctx)
}

// takeoverRecheck is how long a successor waits before deciding again on
// a takeover it dropped (failoverLater).
const takeoverRecheck = time.Second

// failoverLater runs failover on sh again after takeoverRecheck. A
// successor drops a takeover when sh's route moved while it pinged the
// members (up to probeTimeout): only a coordinator moves an epoch, so the
// one seen down was alive then, and this node's view of who is down comes
// from membership events handled one at a time on the goroutine that was
// pinging, so the event saying the coordinator is back may still be
// queued behind it. Taking over on the old route would make a second
// coordinator in an epoch of its own (seen in TestNetnsSplitBarrier: two
// coordinators of epoch 2, each refusing the other's members, for good).
// By the time this runs, the queued events are handled: if the
// coordinator is still down, this node decides on the route as it is now.
func (s *Driver) failoverLater(sh *Shuffle) {
	s.background(func(ctx context.Context) {
		if !clock.Sleep(ctx, s.cfg.Clock, takeoverRecheck) {
			return
		}
		if cur, err := s.lookup(sh.ID()); err != nil || cur != sh {
			return // dropped, or freed and created again, since
		}
		if ph, _ := sh.Status(); ph != shuffle.Failed {
			s.failover(ctx, sh)
		}
	})
}

// failoverAll runs failover on every shuffle not failed.
func (s *Driver) failoverAll(ctx context.Context) {
	for _, sh := range s.held() {
		if ph, _ := sh.Status(); ph != shuffle.Failed {
			s.failover(ctx, sh)
		}
	}
}

// failover brings sh up to date with the members seen down, as the
// recovery core decides (recovery.Failover): as the successor of a
// coordinator that is down, take over if a strict majority of the members
// is up; as its coordinator, lose each of them (those seen down during a
// takeover too) if at least half is up.
func (s *Driver) failover(ctx context.Context, sh *Shuffle) {
	sh.failover.Lock()
	defer sh.failover.Unlock()
	before := sh.Route().Epoch
	defer func() {
		if sh.CoordPart() != nil && sh.Route().Epoch != before {
			s.publish(sh)
		}
	}()
	f := recovery.NewFailover()
	for d := f.Step(s.viewOf(sh)); d.Action != recovery.Done; d = f.Step(s.viewOf(sh)) {
		s.perform(ctx, sh, f, d)
	}
}

// perform carries out one decision of sh's failover round f.
func (s *Driver) perform(ctx context.Context, sh *Shuffle, f *recovery.Failover, d recovery.Decision) {
	switch d.Action {
	case recovery.Ping:
		s.pingAll(ctx, sh.ID(), f, d.Nodes)
	case recovery.Verdict:
		s.noteQuorum(sh, d.Quorum)
		if hook := s.afterPings.Load(); hook != nil && d.Quorum.Met && d.Quorum.Rule == recovery.Majority {
			(*hook)(s.Name(), sh.ID())
		}
	case recovery.Later:
		rt := sh.Route()
		s.log.Warn("coordinator lost, but the shuffle moved on while this node asked the members: deciding again",
			"shuffle", sh.ID(), "epoch", rt.Epoch, "term", rt.Term)
		s.failoverLater(sh)
	case recovery.TakeOver:
		s.takeOver(ctx, sh, d.Lost)
	case recovery.Lose:
		if co := sh.CoordPart(); co != nil {
			for _, n := range d.Nodes {
				s.coord.Lose(ctx, co, n)
			}
		}
	}
}
