package coordinator

import (
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// successorState is the state of a two-task shuffle over a, b, c created by
// a, on a's successor, moved to the epoch without a.
func successorState(t *testing.T, replication int) *shuffle.State {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 2, DType: "|u1", Replication: replication,
		OldChunks: spec.Chunks{{2, 2}}, NewChunks: spec.Chunks{{2, 2}}}
	probe, err := shuffle.New(sp, "a", members, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	st, err := shuffle.New(sp, "a", members, nil, probe.Candidates()[1])
	if err != nil {
		t.Fatal(err)
	}
	rt, err := st.RouteFor([]string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	st.SetRouteLocked(rt)
	return st
}

// The successor rebuilds the barrier from the survivors' facts: a task
// whose sender reported is done; a task whose sender was the lost
// coordinator is done if every survivor committed it, else pending; under
// replication 2 the loss replays nothing and the rebuilt barrier seals.
func TestRebuild(t *testing.T) {
	one := barrier.Totals{Pieces: 1, Rows: 1, Bytes: 1, Checksum: 1}
	task0 := control.Finished{Task: 0, Sent: map[string]barrier.Totals{"a": {}, "b": one, "c": one}}
	facts := func(cCommits1 bool) map[string]*control.Facts {
		f := map[string]*control.Facts{
			"b": {Sent: []control.Finished{task0}, Held: []control.Committed{{Task: 0, Held: one}, {Task: 1, Held: one}}},
			"c": {Held: []control.Committed{{Task: 0, Held: one}}},
		}
		if cCommits1 {
			f["c"].Held = append(f["c"].Held, control.Committed{Task: 1, Held: one})
		}
		return f
	}
	for _, tc := range []struct {
		name        string
		replication int
		cCommits1   bool
		pending     []uint64
		seal        bool
	}{
		{"task 1 not committed by c", 1, false, []uint64{1}, false},
		{"task 1 committed by all but its sender held a's data", 1, true, []uint64{1}, false},
		{"replication 2", 2, true, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh, d, err := Rebuild(successorState(t, tc.replication), facts(tc.cCommits1))
			if err != nil {
				t.Fatal(err)
			}
			if got := sh.tracker.Pending(); !slices.Equal(got, tc.pending) || d.Seal != tc.seal || d.Fail != nil {
				t.Fatalf("pending %v, decision %+v; want pending %v, seal %v", got, d, tc.pending, tc.seal)
			}
		})
	}
}
