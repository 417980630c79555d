package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// A node cut off for longer than failure detection is lost to the shuffles
// it belongs to: their coordinators move on without it, and may finish and
// close them while it cannot hear. When it comes back nobody tells it (the
// close and the epoch moves gave up on it), so it asks: for every shuffle it
// holds and does not coordinate, it sends control.OpCheck to the shuffle's
// coordinator candidates (for one it coordinates: see closedElsewhere), when members come back (memberEvent) and every
// Config.Recheck. It frees the shuffle (as a close does: memory, spill files,
// ledger) when the answers show that nobody counts it in:
//
//   - closed from any candidate: the shuffle's client closed it, which is
//     meant for every node;
//   - otherwise, only once every candidate that could still coordinate
//     answered, none of them counting this node in: each either
//     coordinates it and has this node lost in its epoch (lost), or does not
//     coordinate it (unknown: it never had it, restarted, freed it, or
//     follows another coordinator).
//
// Any candidate that counts this node in (member), or that did not answer
// (down, unreachable, busy taking over), keeps the shuffle: ask again
// later. The candidates that could coordinate are the shuffle's members in
// candidate order, but for those this node knows lost (the lost list only
// grows, so they never coordinate again) and itself (it does not
// coordinate it). Asking them all, rather than only the coordinator of the
// term this node knows, keeps it safe across a failover it missed: the
// coordinator it knows may have been replaced and restarted (it answers
// unknown, as one that never had the shuffle does), or be the stale side of
// a split that declared this node lost while a successor of a higher term
// counts it in; a successor that holds the shuffle is always among the
// candidates asked, and its member keeps it. The healthy case costs one
// request: the coordinator this node knows answers member, and the others
// are not asked. A shuffle younger than Config.Recheck is not checked: its
// create may still be on its way to the coordinator, which would answer
// unknown.

// checkTimeout bounds one OpCheck request.
const checkTimeout = 5 * time.Second

// rechecker serialises a node's checks: one runs at a time, and a request
// made while one runs queues exactly one more.
type rechecker struct {
	run     sync.Mutex
	mu      sync.Mutex
	pending bool
}

// recheckLoop checks the shuffles this node holds every Config.Recheck,
// for as long as the service runs.
func (s *Service) recheckLoop() {
	s.background(func(ctx context.Context) {
		t := time.NewTicker(s.cfg.Recheck)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.recheckSoon()
			case <-ctx.Done():
				return
			}
		}
	})
}

// recheckSoon checks, in the background, every shuffle this node holds,
// unless such a check is already queued.
func (s *Service) recheckSoon() {
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
func (s *Service) recheckAll(ctx context.Context) {
	for _, sh := range s.held() {
		if ctx.Err() != nil {
			return
		}
		s.recheckOne(ctx, sh)
	}
}

// recheckOne asks sh's candidates whether this node is still in sh, and
// frees sh here if nobody counts it in.
func (s *Service) recheckOne(ctx context.Context, sh *entry) {
	rt := sh.Route()
	if time.Since(sh.born) < s.cfg.Recheck || (rt.Coordinator == s.Name() && sh.coordPart() == nil) {
		return
	}
	var r ruling
	if sh.coordPart() != nil {
		r = s.closedElsewhere(ctx, sh.ID(), rt.Lost)
	} else {
		r = s.verdict(ctx, sh.ID(), rt.Coordinator, s.candidatesOf(sh))
	}
	if !r.drop {
		return
	}
	s.mu.RLock()
	same := s.shuffles[sh.ID()] == sh
	s.mu.RUnlock()
	if !same {
		return
	}
	s.log.Info("shuffle dropped: this node is no longer in it", "shuffle", sh.ID(), "node", s.Name(), "reason", r.why)
	if err := s.dropAs(sh.ID(), r.why, !r.closed); err != nil {
		s.log.Error("freeing a shuffle this node is no longer in", "shuffle", sh.ID(), "err", err)
	}
}

// closedElsewhere asks the members this coordinator declared lost and
// sees up again whether they freed shuffle id on its client's close, and
// says whether to drop it and why. A cut-off node that took over (half of
// the members up is enough, see outnumbered) or that coordinated the
// shuffle before the cut moved on without the others; back, it learns the
// shuffle was closed. A member that counts itself in another coordinator's
// epoch is a split (two coordinators): logged, not acted on here.
func (s *Service) closedElsewhere(ctx context.Context, id string, lost []string) ruling {
	var back []string
	for _, n := range lost {
		if n != s.Name() && !s.isDown(n) {
			back = append(back, n)
		}
	}
	answers := s.askAll(ctx, id, back)
	for _, n := range back {
		switch answers[n].Status {
		case control.StatusClosed:
			return closedBy(n)
		case control.StatusMember, control.StatusLost:
			s.log.Warn("another node coordinates this shuffle too", "shuffle", id, "peer", n, "epoch", answers[n].Epoch)
		}
	}
	return ruling{}
}

// ruling is what the answers to a check say of a shuffle held here: drop
// it or not, why, and whether because it was closed (else it goes on
// without this node).
type ruling struct {
	why          string
	drop, closed bool
}

// closedBy is the ruling of a close that node n saw.
func closedBy(n string) ruling {
	return ruling{why: fmt.Sprintf("closed (node %s freed it on its client's close)", n), drop: true, closed: true}
}

// askAll sends control.OpCheck about shuffle id to nodes, in parallel, and
// returns their answers by node.
func (s *Service) askAll(ctx context.Context, id string, nodes []string) map[string]control.Reply {
	answers := make(map[string]control.Reply, len(nodes))
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

// candidatesOf are the members of sh that could coordinate it now or
// later, as this node knows it: its candidates but the lost ones and self.
func (s *Service) candidatesOf(sh *entry) []string {
	lost := sh.Route().Lost
	var out []string
	for _, c := range sh.Candidates() {
		if c != s.Name() && !slices.Contains(lost, c) {
			out = append(out, c)
		}
	}
	return out
}

// verdict asks first (the coordinator this node knows), then, unless it
// counts this node in, every other candidate, and says whether to drop the
// shuffle and why (see the top of this file).
func (s *Service) verdict(ctx context.Context, id, first string, cands []string) ruling {
	r := s.askCheck(ctx, id, first)
	switch r.Status {
	case control.StatusMember:
		return ruling{}
	case control.StatusClosed:
		return closedBy(first)
	}
	answers := s.askAll(ctx, id, otherThan(cands, first))
	answers[first] = r
	return decide(answers)
}

// decide applies the rules at the top of this file to the answers of the
// candidates, by node (an empty Status: no answer).
func decide(answers map[string]control.Reply) ruling {
	why := "no candidate coordinates it"
	nodes := make([]string, 0, len(answers))
	for n := range answers {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	keep := false
	for _, n := range nodes {
		switch r := answers[n]; r.Status {
		case control.StatusClosed:
			return closedBy(n)
		case control.StatusLost:
			why = fmt.Sprintf("declared lost in epoch %d by its coordinator %s", r.Epoch, n)
		case control.StatusUnknown:
		default: // member, or no answer
			keep = true
		}
	}
	return ruling{why: why, drop: !keep}
}

// askCheck sends control.OpCheck about shuffle id to node n; a reply
// without a Status means no answer (down, unreachable, busy).
func (s *Service) askCheck(ctx context.Context, id, n string) control.Reply {
	if s.isDown(n) {
		return control.Reply{}
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	r, err := s.request(ctx, n, control.Msg{Op: control.OpCheck, Shuffle: id, Node: s.Name()})
	if err != nil {
		s.log.Debug("check unanswered", "shuffle", id, "peer", n, "err", err)
		return control.Reply{}
	}
	return r
}

// answerCheck handles control.OpCheck from c.Node: see the statuses in
// package control. It does not touch the shuffle (a check is not use).
func (s *Service) answerCheck(c *control.Msg) (control.Reply, error) {
	s.mu.RLock()
	sh, ok := s.shuffles[c.Shuffle]
	why, gone := s.gone.why(c.Shuffle)
	closed := s.closed
	s.mu.RUnlock()
	switch {
	case closed:
		return control.Reply{}, ErrClosed
	case !ok && gone && why == closedReason:
		return control.Reply{Status: control.StatusClosed}, nil
	case !ok:
		return control.Reply{Status: control.StatusUnknown, Reason: why}, nil
	}
	rt := sh.Route()
	switch {
	case sh.coordPart() != nil && slices.Contains(rt.Live, c.Node):
		return control.Reply{Status: control.StatusMember, Epoch: rt.Epoch}, nil
	case sh.coordPart() != nil:
		return control.Reply{Status: control.StatusLost, Epoch: rt.Epoch}, nil
	case rt.Coordinator == s.Name():
		return control.Reply{}, &shuffle.Busy{After: 100 * time.Millisecond, Err: fmt.Errorf("shuffle %s: node %s is taking over in term %d", c.Shuffle, s.Name(), rt.Term)}
	}
	return control.Reply{Status: control.StatusUnknown, Reason: "follows " + rt.Coordinator}, nil
}

// dropIfLost frees sh here when err says an epoch move declared this node
// lost: it is no longer an owner, and the shuffle goes on without it.
func (s *Service) dropIfLost(id string, err error) {
	if !errors.Is(err, ErrDeclaredLost) {
		return
	}
	s.log.Info("shuffle dropped: this node was declared lost", "shuffle", id, "node", s.Name(), "reason", err.Error())
	if derr := s.dropAs(id, err.Error(), true); derr != nil {
		s.log.Error("freeing a shuffle this node was declared lost in", "shuffle", id, "err", derr)
	}
}
