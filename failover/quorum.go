package failover

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/wire"
)

// Quorum: the rules, and why at most one side of a partition moves a
// shuffle on, are package recovery's (quorum.go). This file carries them
// out: it builds the node's view of a shuffle for the core, pings the
// members the core asks about, and keeps the last quorum found short (for
// quorumErr and a warning logged once).

// viewOf is this node's view of sh, for the recovery core.
func (s *Driver) viewOf(sh *Shuffle) *recovery.View {
	rt := sh.Route()
	s.mu.RLock()
	down := make(map[string]bool, len(s.down))
	for n, d := range s.down {
		if d {
			down[n] = true
		}
	}
	s.mu.RUnlock()
	return &recovery.View{
		Self: s.Name(), Candidates: sh.Candidates(), Members: len(sh.Members),
		Epoch:        recovery.Epoch{Number: rt.Epoch, Term: rt.Term, Coordinator: rt.Coordinator, Live: rt.Live, Lost: rt.Lost},
		Coordinating: sh.CoordPart() != nil, Down: down,
	}
}

// probeTimeout bounds the ping of the members before a takeover (a
// member asked takeoverTries times takes ~2.5 s).
const probeTimeout = 3 * time.Second

// pingAll pings nodes about shuffle id, in parallel, and feeds each answer
// to f until its poll is settled or every ping is over.
func (s *Driver) pingAll(ctx context.Context, id string, f *recovery.Failover, nodes []string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	type answer struct {
		node string
		ok   bool
	}
	answers := make(chan answer, len(nodes))
	for _, n := range nodes {
		wg.Go(func() { answers <- answer{n, s.ping(ctx, n, id)} })
	}
	for settled := f.Settled(); !settled; {
		a := <-answers
		settled = f.Answered(a.node, a.ok)
	}
}

// ping reports whether node n answers control.OpPing about shuffle id,
// asking again as for a takeover (a request or reply may be lost). A node
// that did not answer within the last probeTimeout is not asked again
// until then: the members of one partition are reported one at a time, and
// each report would wait for the same silent nodes. Only silence is
// remembered: an answer counts for the ping it answered, never later.
func (s *Driver) ping(ctx context.Context, n, id string) bool {
	if s.silent.recent(n, probeTimeout) {
		return false
	}
	err := control.Retry(ctx, takeoverTries, func() error {
		_, err := s.request(ctx, n, control.Msg{Op: control.OpPing, Shuffle: id, Node: s.Name()})
		if Answered(err) {
			return nil
		}
		return err
	})
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) { // not the caller's giving up
		s.silent.note(n)
	}
	return err == nil
}

// silence remembers when nodes last failed to answer a ping. Safe for
// concurrent use.
type silence struct {
	clock clock.Clock
	mu    sync.Mutex
	at    map[string]time.Time
}

// note records that n did not answer now.
func (q *silence) note(n string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.at == nil {
		q.at = map[string]time.Time{}
	}
	q.at[n] = q.clock.Now()
}

// recent reports whether n failed to answer within the last d.
func (q *silence) recent(n string, d time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	at, ok := q.at[n]
	return ok && clock.Since(q.clock, at) < d
}

// Answered reports whether a request that returned err got a reply.
func Answered(err error) bool {
	_, refused := wire.RefusalCodeOf(err)
	return err == nil || refused || errors.Is(err, wire.ErrBusy)
}

// shortMsg is the warning logged when a quorum under each rule is short.
var shortMsg = map[recovery.Rule]string{
	recovery.Majority: "coordinator lost, but this node sees no majority up: not taking over",
	recovery.Half:     "coordinator sees fewer than half of the shuffle's members up: declaring nobody lost, waiting",
}

// noteQuorum records a settled quorum q of sh. When it is short it keeps
// its count as sh's last quorum short of what it needed (for quorumErr),
// and logs so unless it was short the last time too.
func (s *Driver) noteQuorum(sh *Shuffle, q recovery.Quorum) {
	if q.Met {
		sh.short.Store(nil)
		return
	}
	c := q.Count
	if sh.short.Swap(&c) == nil {
		s.log.Warn(shortMsg[q.Rule], "shuffle", sh.ID(), "up", c.Up, "live", c.Live, "members", c.Members)
	}
}

// NoQuorum reports whether this node sees sh's coordinator (co) down and
// too few members up for a takeover, as it sees them or as its last ping
// found them (no node of its side can replace the coordinator), and the
// count it found.
func (s *Driver) NoQuorum(sh *Shuffle) (co string, q recovery.Count, short bool) {
	co = sh.Coordinator()
	if sh.CoordPart() != nil || co == s.Name() || !s.isDown(co) {
		return co, q, false
	}
	q = recovery.Seen(s.viewOf(sh))
	if last := sh.short.Load(); q.Majority() && last != nil {
		q = *last // this node's ping found fewer members up than it sees
	}
	return co, q, !q.Majority()
}
