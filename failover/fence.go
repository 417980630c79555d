package failover

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/wire"
)

// Fencing by term (package recovery, fence.go): a coordinator replaced
// while it was frozen or cut off learns it and steps down, from either
// side. The coordinator of the higher term, checking the members it
// declared lost and sees back, tells one that coordinates in an older term
// its current epoch, which declares it lost (it drops the shuffle, and
// answers its clients ErrUnavailable: ask another node). A coordinator
// whose own decisions come back refused for their term asks its
// successors at its next check, and steps down when one has it lost.

// closedElsewhere asks the members this coordinator declared lost and sees
// back (recovery.Back), and its successors after one of its decisions was
// refused for its term (recovery.Successors), whether they freed shuffle
// id on its client's close or coordinate it too; it fences the other
// coordinators by term and says whether to drop the shuffle here and why.
func (s *Driver) closedElsewhere(ctx context.Context, sh *Shuffle, v *recovery.View) recovery.Ruling {
	ask := recovery.Back(v)
	if sh.refused.Swap(false) {
		ask = appendNew(ask, recovery.Successors(v))
	}
	answers := s.askAll(ctx, sh.ID(), ask)
	for _, n := range ask {
		a := answers[n]
		if a.Status == recovery.StatusClosed {
			return recovery.Ruling{Why: "closed (node " + n + " freed it on its client's close)", Drop: true, Closed: true}
		}
		switch recovery.Fence(v.Epoch, a) {
		case recovery.Tell:
			s.tell(ctx, sh, n, v.Epoch)
		case recovery.StepDown:
			return recovery.Ruling{Why: fmt.Sprintf("replaced: node %s coordinates it in term %d (this node's term %d) and has this node lost", n, a.Term, v.Epoch.Term), Drop: true}
		default:
			if a.Status == recovery.StatusMember || a.Status == recovery.StatusLost {
				s.log.Warn("another node coordinates this shuffle too", "shuffle", sh.ID(), "peer", n, "epoch", a.Epoch, "term", a.Term)
			}
		}
	}
	return recovery.Ruling{}
}

// tell sends node n, a coordinator of an older term, this node's epoch e
// of sh, which declares n lost: n steps down.
func (s *Driver) tell(ctx context.Context, sh *Shuffle, n string, e recovery.Epoch) {
	s.log.Warn("a replaced coordinator is back: telling it the current epoch", "shuffle", sh.ID(), "peer", n, "term", e.Term, "epoch", e.Number)
	c := control.Msg{Op: control.OpEpoch, Shuffle: sh.ID(), Epoch: e.Number, Lost: e.Lost, Node: s.Name(), Term: e.Term}
	if _, err := s.request(ctx, n, c); err != nil {
		s.log.Info("the replaced coordinator answered the current epoch", "shuffle", sh.ID(), "peer", n, "err", err)
	}
}

// NoteRefused marks shuffle id for a check of its successors when err,
// from a decision this node sent as its coordinator, holds a refusal for
// an older term or epoch: this node may have been replaced.
func (s *Driver) NoteRefused(id string, err error) {
	if code, ok := wire.RefusalCodeOf(err); !ok || code != wire.RefuseStaleEpoch {
		return
	}
	if sh, lerr := s.lookup(id); lerr == nil && sh.CoordPart() != nil {
		sh.refused.Store(true)
		s.recheckSoon()
	}
}

// appendNew appends to a the elements of b not in it.
func appendNew(a, b []string) []string {
	seen := make(map[string]bool, len(a))
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			seen[x] = true
			a = append(a, x)
		}
	}
	return a
}
