package shuffle

import (
	"errors"
	"slices"
	"testing"
)

// Every member derives the same candidates, the creator first, and the
// coordinator of an epoch is the first candidate not lost, its term its
// place: the term grows with the lost list and names one node.
func TestCoordinatorFollowsLost(t *testing.T) {
	st := newState(t, 1) // created by "a" over a, b, c
	other, err := New(st.Spec, "a", []string{"b", "c", "a"}, nil, "c")
	if err != nil {
		t.Fatal(err)
	}
	cand := st.Candidates()
	if cand[0] != "a" || !slices.Equal(cand, other.Candidates()) || len(cand) != 3 {
		t.Fatalf("candidates %v on a, %v on c", cand, other.Candidates())
	}
	if rt := st.Route(); rt.Coordinator != "a" || rt.Term != 0 {
		t.Fatalf("epoch 0: coordinator %s term %d", rt.Coordinator, rt.Term)
	}
	rt, err := st.RouteFor([]string{cand[2], "a"})
	if err != nil || rt.Coordinator != cand[1] || rt.Term != 1 {
		t.Fatalf("without %s and a: coordinator %s term %d (%v), want %s term 1", cand[2], rt.Coordinator, rt.Term, err, cand[1])
	}
	down := func(n string) bool { return n == "a" || n == cand[1] }
	next, lost, ok := st.Successor(down)
	if !ok || next != cand[2] || !slices.Equal(lost, []string{"a", cand[1]}) {
		t.Fatalf("successor with a and %s down: %s, lost %v", cand[1], next, lost)
	}
}

// Decisions of an older term are refused with ErrStaleTerm; moves must
// come from their epoch's coordinator.
func TestTermFencing(t *testing.T) {
	st := newState(t, 1)
	st, err := New(st.Spec, "a", st.Members, nil, st.Candidates()[2]) // the last candidate's view
	if err != nil {
		t.Fatal(err)
	}
	next := st.Candidates()[1]
	if err := st.CheckMove("takeover", next, 1, []string{"a"}, 1); err != nil {
		t.Fatal(err)
	}
	if err := st.CheckMove("takeover", st.Self, 1, []string{"a"}, 1); err == nil {
		t.Fatal("a takeover by a node that does not coordinate that epoch was accepted")
	}
	rt, _ := st.RouteFor([]string{"a"})
	st.SetRouteLocked(rt)
	err = st.CheckDecision("seal", "a", 0)
	var r *Refusal
	if !errors.Is(err, ErrStaleTerm) || !errors.As(err, &r) {
		t.Fatalf("seal of term 0 at term 1: %v", err)
	}
	var b *Busy
	if err := st.CheckDecision("seal", "x", 2); !errors.As(err, &b) {
		t.Fatalf("seal of a newer term: %v, want busy", err)
	}
}

// A seal must be of the member's epoch: one of an older epoch is refused
// with ErrStaleEpoch, one of a newer epoch asks the sender to retry, and
// an older term is refused before the epoch is looked at.
func TestSealEpochFencing(t *testing.T) {
	st := newState(t, 1)
	rt, err := st.RouteFor([]string{"a"}) // the creator: epoch 1, term 1
	if err != nil {
		t.Fatal(err)
	}
	st.SetRouteLocked(rt)
	if err := st.CheckSeal(rt.Coordinator, rt.Term, 1); err != nil {
		t.Fatalf("seal of this epoch: %v", err)
	}
	var r *Refusal
	if err := st.CheckSeal(rt.Coordinator, rt.Term, 0); !errors.Is(err, ErrStaleEpoch) || !errors.As(err, &r) {
		t.Fatalf("seal of epoch 0 at epoch 1: %v", err)
	}
	var b *Busy
	if err := st.CheckSeal(rt.Coordinator, rt.Term, 2); !errors.As(err, &b) {
		t.Fatalf("seal of epoch 2 at epoch 1: %v, want busy", err)
	}
	if err := st.CheckSeal("a", 0, 1); !errors.Is(err, ErrStaleTerm) {
		t.Fatalf("seal of term 0 at term 1: %v", err)
	}
}
