package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/wire"
)

// Quorum. A partition looks, from each side, like a crash of the other
// side: both see the others' members down. So that at most one side moves
// a shuffle on, a node counts the members it has up, itself included, and
// acts on a loss only with enough of them:
//
//   - a successor takes over from a coordinator seen down only with a
//     strict majority of the members of the shuffle's current epoch
//     (Route().Live, as it knows it) up: first as it sees them (not seen
//     down), then as they answer a ping (control.OpPing). Failure
//     detection reports the other side of a partition one member at a
//     time, often the coordinator first: a member not seen down yet may be
//     on the other side, one that answers is on this one;
//   - the coordinator declares members lost (moves their partitions,
//     orders their replays, may seal without them) only with at least half
//     of the shuffle's members (every member pinned at create) up: first
//     as it sees them, then as they answer a ping. It breaks the tie of an
//     even split. Below half it declares nobody lost and waits; when
//     members come back it checks again (memberEvent), and when the
//     partition heals the others are simply back.
//
// The coordinator counts against every member pinned at create, not its
// current epoch, for the same one-at-a-time reason: against its shrinking
// epoch, a coordinator cut off alone from three would see 3 of 4, then 2
// of 3, then 1 of 2 up and end up alone in a member list of its own, free
// to seal, while the three others take over. Counted against every member,
// and with the ping, it declares none of them lost: the members it does
// not see down yet do not answer.
//
// Why at most one side acts: let A be the coordinator's side of a
// partition and B the other, disjoint; LB the epoch's members as B knows
// them and M every member pinned at create (the coordinator's epochs only
// drop members from LB, which is within M). To seal without B, the
// coordinator must declare every member of B in its epoch lost; when it
// declares the last one, its epoch's other members are all in A, and it
// needs 2*|A up| >= |M|. B takes over only if a strict majority of LB
// answered its successor, all in B: 2*|B| > |LB|. Both cannot hold:
// A up and B are disjoint parts of LB, so |B| <= |LB| - |M|/2 <= |LB|/2.
//
// The cost: with 4 members, a crash of the coordinator and one other
// member at once leaves 2 of 4 up, not a strict majority, and the shuffle
// waits for one of them to come back; with 5 members 3 of 5 go on. A
// coordinator whose members crash one after another stops declaring them
// lost once fewer than half of the members pinned at create are up. And a
// takeover waits for the pings, up to probeTimeout when a member not yet
// seen down does not answer.

// quorum is how many members of a shuffle's current epoch this node sees
// up (itself included), of how many the epoch has (live) and the shuffle
// pinned at create (members).
type quorum struct{ up, live, members int }

// quorumOf counts sh's members up as this node sees them.
func (s *Service) quorumOf(sh *entry) quorum {
	live := sh.Route().Live
	q := quorum{live: len(live), members: len(sh.Members)}
	for _, n := range live {
		if n == s.Name() || !s.isDown(n) {
			q.up++
		}
	}
	return q
}

// majority reports a strict majority up: enough to take over.
func (q quorum) majority() bool { return 2*q.up > q.live }

// half reports at least half of the members pinned at create up: enough
// for the coordinator to declare the others lost.
func (q quorum) half() bool { return 2*q.up >= q.members }

// mayTakeOver reports whether this node, the successor of sh's lost
// coordinator, has a strict majority of the members of sh's epoch up:
// first as it sees them (not seen down), then as they answer a ping
// (reachMajority); if not, it logs so (once until it may again).
func (s *Service) mayTakeOver(ctx context.Context, sh *entry) bool {
	q := s.quorumOf(sh)
	if q.majority() {
		q = s.reachMajority(ctx, sh)
	}
	return s.noteQuorum(sh, q.majority(), q, "coordinator lost, but this node sees no majority up: not taking over")
}

// probeTimeout bounds the ping of the members before a takeover (a
// member asked takeoverTries times takes ~2.5 s).
const probeTimeout = 3 * time.Second

// reachMajority pings the members of sh's epoch not seen down (but this
// node), in parallel, and counts this node and those that answer, until
// they are a strict majority or every ping is over. Failure detection
// reports the other side of a partition one member at a time: a member
// not seen down yet may be on the other side, one that answers now is on
// this one. Any reply counts, a refusal too (an older node refuses the
// op).
func (s *Service) reachMajority(ctx context.Context, sh *entry) quorum {
	return s.reach(ctx, sh, quorum.majority)
}

// reach pings the members of sh's epoch not seen down (but this node), in
// parallel, and counts this node and those that answer until enough says
// so or every ping is over.
func (s *Service) reach(ctx context.Context, sh *entry, enough func(quorum) bool) quorum {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	live := sh.Route().Live
	others := slices.DeleteFunc(otherThan(live, s.Name()), s.isDown)
	answers := make(chan bool, len(others))
	for _, n := range others {
		wg.Go(func() { answers <- s.ping(ctx, n, sh.ID()) })
	}
	q := quorum{up: 1, live: len(live), members: len(sh.Members)}
	for range others {
		if enough(q) {
			break
		}
		if <-answers {
			q.up++
		}
	}
	return q
}

// ping reports whether node n answers control.OpPing about shuffle id,
// asking again as for a takeover (a request or reply may be lost). A node
// that did not answer within the last probeTimeout is not asked again
// until then: the members of one partition are reported one at a time, and
// each report would wait for the same silent nodes. Only silence is
// remembered: an answer counts for the ping it answered, never later.
func (s *Service) ping(ctx context.Context, n, id string) bool {
	if s.silent.recent(n, probeTimeout) {
		return false
	}
	err := control.Retry(ctx, takeoverTries, func() error {
		_, err := s.request(ctx, n, control.Msg{Op: control.OpPing, Shuffle: id, Node: s.Name()})
		if answered(err) {
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
	mu sync.Mutex
	at map[string]time.Time
}

// note records that n did not answer now.
func (q *silence) note(n string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.at == nil {
		q.at = map[string]time.Time{}
	}
	q.at[n] = time.Now()
}

// recent reports whether n failed to answer within the last d.
func (q *silence) recent(n string, d time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	at, ok := q.at[n]
	return ok && time.Since(at) < d
}

// anyDown reports whether this node sees a member of sh's epoch, other
// than itself, down.
func (s *Service) anyDown(sh *entry) bool {
	for _, n := range sh.Route().Live {
		if n != s.Name() && s.isDown(n) {
			return true
		}
	}
	return false
}

// answered reports whether a request that returned err got a reply.
func answered(err error) bool {
	_, refused := wire.RefusalCodeOf(err)
	return err == nil || refused || errors.Is(err, wire.ErrBusy)
}

// mayLose reports whether this node, sh's coordinator, has at least half
// of sh's members up, and may declare the others lost: first as it sees
// them, then as they answer a ping (a coordinator cut off alone is told of
// the others' failures one at a time and, without the ping, would declare
// the first ones lost while it still counted the rest up); if not, it logs
// so (once until it may again).
func (s *Service) mayLose(ctx context.Context, sh *entry) bool {
	q := s.quorumOf(sh)
	if q.half() {
		q = s.reach(ctx, sh, quorum.half)
	}
	return s.noteQuorum(sh, q.half(), q, "coordinator sees fewer than half of the shuffle's members up: declaring nobody lost, waiting")
}

// noteQuorum returns ok. When ok is false it keeps q as sh's last quorum
// short of what it needed (for quorumErr), and logs msg unless it was
// short the last time too.
func (s *Service) noteQuorum(sh *entry, ok bool, q quorum, msg string) bool {
	if ok {
		sh.short.Store(nil)
		return true
	}
	if sh.short.Swap(&q) == nil {
		s.log.Warn(msg, "shuffle", sh.ID(), "up", q.up, "live", q.live, "members", q.members)
	}
	return false
}

// quorumErr returns an error wrapping ErrUnavailable and ErrNoQuorum when
// this node sees sh's coordinator down and too few members up for a
// takeover, as it sees them or as its last ping found them (no node of its
// side can replace the coordinator); nil otherwise.
func (s *Service) quorumErr(sh *entry) error {
	co := sh.Coordinator()
	if sh.coordPart() != nil || co == s.Name() || !s.isDown(co) {
		return nil
	}
	q := s.quorumOf(sh)
	if last := sh.short.Load(); q.majority() && last != nil {
		q = *last // this node's ping found fewer members up than it sees
	}
	if !q.majority() {
		return fmt.Errorf("%w: shuffle %s: node %s sees its coordinator %s down, up %d of %d members: %w",
			ErrUnavailable, sh.ID(), s.Name(), co, q.up, q.live, ErrNoQuorum)
	}
	return nil
}
