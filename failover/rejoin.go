package failover

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Rejoin: a node back from a cut asks the shuffles' candidates whether it
// is still in them, and frees those nobody counts it in. The rules are
// package recovery's (rejoin.go); this file asks, and frees. A shuffle
// younger than Config.Recheck is not checked: its create may still be on
// its way to the coordinator, which would answer unknown.

// checkTimeout bounds one OpCheck request.
const checkTimeout = 5 * time.Second

// rechecker serialises a node's checks: one runs at a time, and a request
// made while one runs queues exactly one more.
type rechecker struct {
	run     gate
	mu      sync.Mutex
	pending bool
}

// RecheckLoop checks the shuffles this node holds every Config.Recheck,
// for as long as the service runs.
func (s *Driver) RecheckLoop() {
	s.background(func(ctx context.Context) {
		t := s.cfg.Clock.NewTicker(s.cfg.Recheck)
		defer t.Stop()
		for {
			select {
			case <-t.C():
				s.recheckSoon()
			case <-ctx.Done():
				return
			}
		}
	})
}

// recheckSoon checks, in the background, every shuffle this node holds,
// unless such a check is already queued.
func (s *Driver) recheckSoon() {
	s.recheck.mu.Lock()
	queued := s.recheck.pending
	s.recheck.pending = true
	s.recheck.mu.Unlock()
	if queued {
		return
	}
	s.background(func(ctx context.Context) {
		s.recheck.run.Lock()
		defer s.recheck.run.Unlock()
		s.recheck.mu.Lock()
		s.recheck.pending = false
		s.recheck.mu.Unlock()
		s.recheckAll(ctx)
	})
}

// recheckAll checks every shuffle this node holds, one after the other.
func (s *Driver) recheckAll(ctx context.Context) {
	for _, sh := range s.held() {
		if ctx.Err() != nil {
			return
		}
		s.recheckOne(ctx, sh)
	}
}

// recheckOne asks sh's candidates whether this node is still in sh, and
// frees sh here if nobody counts it in.
func (s *Driver) recheckOne(ctx context.Context, sh *Shuffle) {
	rt := sh.Route()
	if clock.Since(s.cfg.Clock, sh.born) < s.cfg.Recheck || (rt.Coordinator == s.Name() && sh.CoordPart() == nil) {
		return
	}
	var r recovery.Ruling
	if v := s.viewOf(sh); v.Coordinating {
		r = s.closedElsewhere(ctx, sh, v)
	} else {
		r = s.verdict(ctx, sh.ID(), v)
	}
	for _, co := range r.Tell {
		s.log.Warn("a coordinator of another line of epochs counts this node in: asking it to declare this node lost", "shuffle", sh.ID(), "node", s.Name(), "peer", co, "reason", r.Why)
		s.TellRestarted(sh.ID(), co)
	}
	if !r.Drop {
		return
	}
	if cur, err := s.lookup(sh.ID()); err != nil || cur != sh {
		return
	}
	s.log.Info("shuffle dropped: this node is no longer in it", "shuffle", sh.ID(), "node", s.Name(), "reason", r.Why)
	if err := s.host.Drop(sh.ID(), r.Why, !r.Closed); err != nil {
		s.log.Error("freeing a shuffle this node is no longer in", "shuffle", sh.ID(), "err", err)
	}
}

// askAll sends control.OpCheck about shuffle id to nodes, in parallel, and
// returns their answers by node.
func (s *Driver) askAll(ctx context.Context, id string, nodes []string) map[string]recovery.Answer {
	answers := make(map[string]recovery.Answer, len(nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Go(func() {
			r := s.askCheck(ctx, id, n)
			mu.Lock()
			answers[n] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	return answers
}

// verdict asks the coordinator this node knows (v's), then, unless its
// answer decides, every other candidate, and says whether to drop the
// shuffle and why, and whom to ask to declare this node lost
// (recovery.First, recovery.Decide).
func (s *Driver) verdict(ctx context.Context, id string, v *recovery.View) recovery.Ruling {
	first := v.Epoch.Coordinator
	a := s.askCheck(ctx, id, first)
	if r, ok := recovery.First(first, a); ok {
		return r
	}
	answers := s.askAll(ctx, id, otherThan(recovery.CheckTargets(v), first))
	answers[first] = a
	return recovery.Decide(v, answers)
}

// askCheck sends control.OpCheck about shuffle id to node n and returns
// its answer (recovery.NoAnswer: down, unreachable, busy).
func (s *Driver) askCheck(ctx context.Context, id, n string) recovery.Answer {
	if s.isDown(n) {
		return recovery.Answer{}
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	r, err := s.request(ctx, n, control.Msg{Op: control.OpCheck, Shuffle: id, Node: s.Name()})
	if errors.Is(err, wire.ErrBusy) {
		return recovery.Answer{Status: recovery.StatusBusy}
	}
	if err != nil {
		s.log.Debug("check unanswered", "shuffle", id, "peer", n, "err", err)
		return recovery.Answer{}
	}
	return recovery.Answer{Status: checkStatus[r.Status], Epoch: r.Epoch, Term: r.Term, Lost: r.Lost}
}

// checkStatus maps the statuses of a check's reply to the core's (an
// unknown string: no answer).
var checkStatus = map[string]recovery.Status{
	control.StatusMember: recovery.StatusMember, control.StatusLost: recovery.StatusLost,
	control.StatusClosed: recovery.StatusClosed, control.StatusUnknown: recovery.StatusUnknown,
}

// AnswerCheck handles control.OpCheck from c.Node: see the statuses in
// package control and recovery.AnswerCheck. sh is the shuffle if this node
// holds it (nil otherwise), why its tombstone if it has one, closedHere
// whether that tombstone says its client closed it. It does not touch the
// shuffle (a check is not use).
func (s *Driver) AnswerCheck(c *control.Msg, sh *Shuffle, why string, closedHere bool) (control.Reply, error) {
	ok := sh != nil
	q := recovery.CheckQuery{Asker: c.Node, Held: ok, ClosedHere: closedHere}
	if ok {
		q.View = *s.viewOf(sh)
	}
	a := recovery.AnswerCheck(&q)
	switch a.Status {
	case recovery.StatusBusy:
		return control.Reply{}, &shuffle.Busy{After: 100 * time.Millisecond, Err: fmt.Errorf("shuffle %s: node %s is taking over in term %d", c.Shuffle, s.Name(), a.Term)}
	case recovery.StatusUnknown:
		if ok {
			why = "follows " + q.View.Epoch.Coordinator
		}
		return control.Reply{Status: control.StatusUnknown, Reason: why}, nil
	}
	return control.Reply{Status: replyStatus[a.Status], Epoch: a.Epoch, Term: a.Term, Lost: a.Lost}, nil
}

// replyStatus maps the core's statuses to a check's reply.
var replyStatus = map[recovery.Status]string{
	recovery.StatusMember: control.StatusMember, recovery.StatusLost: control.StatusLost,
	recovery.StatusClosed: control.StatusClosed,
}

// DropIfLost frees sh here when err says an epoch move declared this node
// lost: it is no longer an owner, and the shuffle goes on without it.
func (s *Driver) DropIfLost(id string, err error) {
	if !errors.Is(err, shuffle.ErrDeclaredLost) {
		return
	}
	s.log.Info("shuffle dropped: this node was declared lost", "shuffle", id, "node", s.Name(), "reason", err.Error())
	if derr := s.host.Drop(id, err.Error(), true); derr != nil {
		s.log.Error("freeing a shuffle this node was declared lost in", "shuffle", id, "err", derr)
	}
}
