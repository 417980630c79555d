package barrier

import (
	"slices"
	"testing"
)

// A done task that a receiver never committed is found by Incomplete
// (unless that receiver is not awaited) and Drop makes it pending again,
// with nothing to send less against.
func TestIncompleteAndDrop(t *testing.T) {
	tr, err := New(Config{Shuffle: "s", Tasks: 2, Receivers: []string{"r1", "r2"}})
	if err != nil {
		t.Fatal(err)
	}
	ab := map[string]Totals{"r1": tA, "r2": tB}
	for _, task := range []uint64{0, 1} {
		if _, err := tr.TaskDone(task, 0, "s", ab); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Committed("r1", task, 0, tA); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tr.Committed("r2", 1, 0, tB); err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	if got := tr.Incomplete(0, all); !slices.Equal(got, []uint64{0}) {
		t.Fatalf("incomplete %v, want [0]", got)
	}
	if got := tr.Incomplete(0, func(n string) bool { return n != "r2" }); len(got) != 0 {
		t.Fatalf("incomplete without awaiting r2: %v", got)
	}
	if err := tr.Drop(0); err != nil {
		t.Fatal(err)
	}
	if _, ok := tr.Undone(0); ok || !slices.Equal(tr.Pending(), []uint64{0}) {
		t.Fatalf("after drop: pending %v", tr.Pending())
	}
	if p := tr.Progress(); p.TasksDone != 1 || p.TasksCommitted != 1 || p.Commits != 2 {
		t.Fatalf("after drop: %+v", p)
	}
}
