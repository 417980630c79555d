package failover

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Coordinator failover. Who coordinates a shuffle follows from its lost
// list (package shuffle, coord.go): when the coordinator is seen down, the
// first coordinator candidate not down takes over, if it sees a strict
// majority of the epoch's members up (package recovery, quorum.go). It sends
// control.OpTakeover (its term, the new epoch and lost list: the old one
// with every member seen down, the coordinator first among them) to every
// live member, itself first. Each member moves to that epoch, as for an
// epoch move, and replies with its facts: what it finished as a sender and
// committed as a receiver. The successor rebuilds the barrier from them
// (coordinator.Rebuild) and coordinates from then on; members send their
// coordinator traffic to the coordinator of their current epoch, so they
// follow it as soon as they moved. Until the successor has rebuilt, it
// refuses coordinator requests as unavailable: puts run again, barrier
// polls ask again.

// takeoverTries is how often the successor asks one member for its facts
// (backing off from 20 ms: ~2.5 s in all); a member that never answers is
// probably dying: its facts are missing, and the tasks that needed them
// replay.
const takeoverTries = 8

// takeOver makes this node the coordinator of sh, lost being the lost list
// of the new epoch. Called with sh.failover held.
func (s *Driver) takeOver(ctx context.Context, sh *Shuffle, lost []string) {
	rt, err := sh.RouteFor(lost)
	if err != nil {
		s.log.Error("cannot take over", "shuffle", sh.ID(), "err", err)
		return
	}
	start := time.Now()
	c := control.Msg{Op: control.OpTakeover, Shuffle: sh.ID(), Epoch: rt.Epoch, Lost: lost, Node: s.Name(), Term: rt.Term}
	s.log.Warn("coordinator lost: taking over", "shuffle", sh.ID(), "term", rt.Term, "epoch", rt.Epoch, "lost", lost)
	if _, err := s.ApplyTakeover(sh, &c); err != nil {
		s.log.Error("cannot take over", "shuffle", sh.ID(), "err", err)
		return
	}
	facts, answers := s.gatherFacts(ctx, rt.Live, c)
	co, d, err := coordinator.Rebuild(sh.State, facts)
	if err != nil {
		s.failEverywhere(ctx, sh, fmt.Errorf("shuffle %s: node %s could not take over as coordinator in term %d: %w", sh.ID(), s.Name(), rt.Term, err))
		return
	}
	sh.SetCoordPart(co)
	s.coord.Resume(co, d)
	for _, n := range recovery.LoseAfterTakeover(answers) {
		s.log.Warn("member holds no state of the shuffle it took over: declaring it lost", "shuffle", sh.ID(), "peer", n, "term", rt.Term)
		s.coord.Lose(ctx, co, n)
	}
	took := time.Since(start)
	s.takeovers.done(start.Add(took), took)
	s.log.Info("takeover done", "shuffle", sh.ID(), "term", rt.Term, "members", len(facts), "took", took)
}

// gatherFacts sends c to every member of live but this node, in parallel,
// and returns their facts and this node's, by node, and each member's
// answer.
func (s *Driver) gatherFacts(ctx context.Context, live []string, c control.Msg) (map[string]*control.Facts, map[string]recovery.TakeoverAnswer) {
	var mu sync.Mutex
	facts := map[string]*control.Facts{}
	answers := map[string]recovery.TakeoverAnswer{}
	var wg sync.WaitGroup
	for _, n := range otherThan(live, s.Name()) {
		wg.Go(func() {
			f, a := s.askFacts(ctx, n, c)
			mu.Lock()
			defer mu.Unlock()
			answers[n] = a
			if f != nil {
				facts[n] = f
			}
		})
	}
	wg.Wait()
	if sh, err := s.lookup(c.Shuffle); err == nil {
		sh.Lock()
		facts[s.Name()] = sh.factsLocked()
		sh.Unlock()
	}
	return facts, answers
}

// askFacts sends c to member n, with retries, and returns its facts and
// answer: nil facts if it never answered (it is probably dying: the tasks
// that needed its facts run again) or holds no state of the shuffle (a
// refusal for a shuffle it left or does not know).
func (s *Driver) askFacts(ctx context.Context, n string, c control.Msg) (*control.Facts, recovery.TakeoverAnswer) {
	var r control.Reply
	err := control.Retry(ctx, takeoverTries, func() error {
		var err error
		r, err = s.request(ctx, n, c)
		return err
	})
	if code, ok := wire.RefusalCodeOf(err); ok && (code == shuffle.RefuseLeft || code == wire.RefuseUnknownShuffle) {
		s.log.Warn("member holds no state of the shuffle", "shuffle", c.Shuffle, "peer", n, "err", err)
		return nil, recovery.TakeoverUnheld
	}
	if err != nil || r.Facts == nil {
		s.log.Warn("member did not answer the takeover", "shuffle", c.Shuffle, "peer", n, "err", err)
		return nil, recovery.TakeoverSilent
	}
	return r.Facts, recovery.TakeoverFacts
}

// ApplyTakeover handles control.OpTakeover on a member: move to the
// successor's epoch and reply with this node's facts, taken under the
// shuffle's lock with the move, so that no commit of an older epoch can
// follow them. A sealed shuffle reopens (reads wait): what the lost
// coordinator knew is rebuilt, and the successor seals again once nothing
// needs to run again, at once if nothing does.
func (s *Driver) ApplyTakeover(sh *Shuffle, c *control.Msg) (control.Reply, error) {
	if err := sh.CheckMove(c.Op, c.Node, c.Term, c.Lost, c.Epoch); err != nil {
		if errors.Is(err, shuffle.ErrOtherLine) {
			s.recheckSoon() // it asks c.Node to declare this node lost
		}
		return control.Reply{}, err
	}
	sh.Lock()
	moved := false
	var err error
	if c.Epoch > sh.RouteLocked().Epoch {
		moved, err = true, sh.MoveLocked(c.Lost)
	}
	facts := sh.factsLocked()
	sh.Unlock()
	if err != nil {
		return control.Reply{}, err
	}
	if moved {
		s.host.ForgetBefore(sh.ID(), c.Epoch)
		s.log.Info("new coordinator", "shuffle", sh.ID(), "peer", c.Node, "term", c.Term, "epoch", c.Epoch)
	}
	return control.Reply{Facts: facts}, nil
}

// MoveLocked makes the epoch where lost are gone the current one, and
// reopens the shuffle. Called with the lock held.
func (sh *Shuffle) MoveLocked(lost []string) error {
	rt, err := sh.RouteFor(lost)
	if err != nil {
		return err
	}
	sh.SetRouteLocked(rt)
	sh.ReopenLocked()
	return nil
}

// failEverywhere fails sh on every live member and here.
func (s *Driver) failEverywhere(ctx context.Context, sh *Shuffle, err error) {
	s.log.Error("shuffle failed", "shuffle", sh.ID(), "err", err)
	rt := sh.Route()
	c := control.Msg{Op: control.OpFail, Shuffle: sh.ID(), Node: s.Name(), Term: rt.Term, Reason: err.Error()}
	_ = s.broadcast(ctx, otherThan(rt.Live, s.Name()), c)
	sh.Finish(shuffle.Failed, err)
	s.host.Forget(sh.ID())
}

// takeoverStats counts this node's finished takeovers (Stats).
type takeoverStats struct {
	mu   sync.Mutex
	n    int64
	last time.Time
	took time.Duration
}

// done records a takeover that finished at end after took.
func (t *takeoverStats) done(end time.Time, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n, t.last, t.took = t.n+1, end, took
}

// snapshot returns the count, end and duration of the last takeover.
func (t *takeoverStats) snapshot() (int64, time.Time, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n, t.last, t.took
}

// otherThan is nodes without self.
func otherThan(nodes []string, self string) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if n != self {
			out = append(out, n)
		}
	}
	return out
}
