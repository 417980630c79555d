package shuffle

import (
	"errors"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/spec"
)

func newState(t *testing.T, replication int) *State {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 6, DType: "|u1", Replication: replication,
		OldChunks: spec.Chunks{{3, 3}}, NewChunks: spec.Chunks{{1, 1, 1, 1, 1, 1}}}
	st, err := New(sp, "a", []string{"c", "a", "b"}, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every partition has an owner among the live members, and each epoch's
// route moves only what the lost member owned.
func TestRouteForMovesOnlyTheLost(t *testing.T) {
	for _, repl := range []int{1, 2} {
		st := newState(t, repl)
		r0 := st.Route()
		r1, err := st.RouteFor([]string{"b"})
		if err != nil {
			t.Fatal(err)
		}
		if r1.Epoch != 1 || !slices.Equal(r1.Live, []string{"a", "c"}) {
			t.Fatalf("replication %d: epoch %d live %v", repl, r1.Epoch, r1.Live)
		}
		for p := range st.Spec.Partitions {
			was, now := st.Members[r0.GroupOf[p]], st.Members[r1.GroupOf[p]]
			if now == "b" || (was != "b" && was != now) {
				t.Errorf("replication %d: partition %d moved %s -> %s", repl, p, was, now)
			}
			if r1.Owned.Has(p) != (now == "a") || (now == "a" && !r1.Held.Has(p)) {
				t.Errorf("replication %d: partition %d: owned/held wrong for %s", repl, p, now)
			}
		}
	}
}

func TestPhases(t *testing.T) {
	st := newState(t, 1)
	st.Finish(Sealed, nil)
	if !errors.Is(st.OpenErr(), ErrSealed) {
		t.Fatalf("sealed: OpenErr %v", st.OpenErr())
	}
	st.Lock()
	st.ReopenLocked()
	st.Unlock()
	if st.OpenErr() != nil {
		t.Fatalf("reopened: OpenErr %v", st.OpenErr())
	}
	st.Finish(Failed, errors.New("boom"))
	st.Finish(Sealed, nil) // failed is final
	if ph, err := st.Status(); ph != Failed || !errors.Is(st.OpenErr(), ErrFailed) || err == nil {
		t.Fatalf("failed: %s %v", ph, err)
	}
}
