package service

import (
	"fmt"
)

// Quorum. A partition looks, from each side, like a crash of the other
// side: both see the others' members down. So that at most one side moves
// a shuffle on, a node counts the members of the shuffle's current epoch
// (Route().Live, as this node knows it) that it sees up, itself included,
// and acts on a loss only with enough of them:
//
//   - a successor takes over from a coordinator seen down only with a
//     strict majority of the epoch's members up (2*up > live);
//   - the coordinator declares members lost (moves their partitions,
//     orders their replays, may seal without them) only with at least half
//     of the shuffle's members up (2*up >= members, members being every
//     member pinned at create): it breaks the tie of an even split. Below
//     half it declares nobody lost and waits; when members come back it
//     checks again (memberEvent), and when the partition heals the others
//     are simply back.
//
// The coordinator counts against every member pinned at create, not its
// current epoch, because failure detection reports the members of the
// other side one at a time: against its shrinking epoch, a coordinator cut
// off alone from three would see 3 of 4, then 2 of 3, then 1 of 2 up and
// end up alone in a member list of its own, free to seal, while the three
// others take over. Counted against every member it loses the first two
// (3 of 4, then 2 of 4 up) and stops at the third (1 of 4): its epoch
// still has a member it cannot reach, so it cannot seal.
//
// Why at most one side acts: let A be the coordinator's side and B the
// other, disjoint, L the coordinator's epoch's members when the partition
// began and LB the epoch's members as B knows them (L or an older, larger
// list: epochs only drop members, so L is within LB, and LB within the
// members pinned at create, M). The coordinator can declare all of B lost
// (and so seal without B) only if 2*|A in L| >= |M|. B takes over only if
// 2*|B in LB| > |LB|. Both at once are impossible: B in LB is at most
// |LB| - |A in L| <= |LB| - |M|/2 <= |LB|/2.
//
// The cost: with 4 members, a crash of the coordinator and one other
// member at once leaves 2 of 4 up, not a strict majority, and the shuffle
// waits for one of them to come back; with 5 members 3 of 5 go on. And a
// coordinator whose members crash one after another stops declaring them
// lost once fewer than half of the members pinned at create are up.

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
// coordinator, sees a strict majority of sh's members up; if not, it logs
// so (once until it may again).
func (s *Service) mayTakeOver(sh *entry) bool {
	q := s.quorumOf(sh)
	return s.noteQuorum(sh, q.majority(), q, "coordinator lost, but this node sees no majority up: not taking over")
}

// mayLose reports whether this node, sh's coordinator, sees at least half
// of sh's members up, and may declare the others lost; if not, it logs so
// (once until it may again).
func (s *Service) mayLose(sh *entry) bool {
	q := s.quorumOf(sh)
	return s.noteQuorum(sh, q.half(), q, "coordinator sees fewer than half of the shuffle's members up: declaring nobody lost, waiting")
}

// noteQuorum returns ok, and logs msg when ok is false and was not the
// last time.
func (s *Service) noteQuorum(sh *entry, ok bool, q quorum, msg string) bool {
	if ok {
		sh.noQuorum.Store(false)
		return true
	}
	if !sh.noQuorum.Swap(true) {
		s.log.Warn(msg, "shuffle", sh.ID(), "up", q.up, "live", q.live, "members", q.members)
	}
	return false
}

// quorumErr returns an error wrapping ErrUnavailable and ErrNoQuorum when
// this node sees sh's coordinator down and too few members up for a
// takeover (no node of its side can replace the coordinator); nil
// otherwise.
func (s *Service) quorumErr(sh *entry) error {
	co := sh.Coordinator()
	if sh.coordPart() != nil || co == s.Name() || !s.isDown(co) {
		return nil
	}
	if q := s.quorumOf(sh); !q.majority() {
		return fmt.Errorf("%w: shuffle %s: node %s sees its coordinator %s down, up %d of %d members: %w",
			ErrUnavailable, sh.ID(), s.Name(), co, q.up, q.live, ErrNoQuorum)
	}
	return nil
}
