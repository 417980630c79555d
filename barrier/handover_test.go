package barrier

import (
	"errors"
	"slices"
	"testing"
)

func TestHandOver(t *testing.T) {
	data := Totals{Pieces: 1, Rows: 5, Bytes: 50, Checksum: 9}
	// task 0 sent c data that c committed; task 1 sent c data c has not
	// committed yet; task 2 sent c nothing (c's commit not in); task 3 is
	// not done.
	setup := func(t *testing.T) *Tracker {
		tr, err := New(Config{Shuffle: "s", Tasks: 4, Receivers: []string{"a", "b", "c"}})
		if err != nil {
			t.Fatal(err)
		}
		must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data, "c": data}))
		must(t)(tr.Committed("a", 0, 0, data))
		must(t)(tr.Committed("b", 0, 0, Totals{}))
		must(t)(tr.Committed("c", 0, 0, data))
		must(t)(tr.TaskDone(1, 0, "b", map[string]Totals{"c": data}))
		must(t)(tr.Committed("a", 1, 0, Totals{}))
		must(t)(tr.Committed("b", 1, 0, Totals{}))
		must(t)(tr.TaskDone(2, 0, "b", map[string]Totals{"a": data}))
		must(t)(tr.Committed("a", 2, 0, data))
		must(t)(tr.Committed("b", 2, 0, Totals{}))
		return tr
	}
	t.Run("keeps what the node committed", func(t *testing.T) {
		tr := setup(t)
		replay, d, err := tr.HandOver(1, "c", []string{"a", "b"})
		if err != nil || d != (Decision{}) {
			t.Fatalf("HandOver: %v %+v", err, d)
		}
		if !slices.Equal(replay, []uint64{1}) {
			t.Fatalf("replay %v, want [1] (only the task c did not commit)", replay)
		}
		if got := tr.Pending(); !slices.Equal(got, []uint64{1, 3}) {
			t.Fatalf("pending %v, want [1 3]", got)
		}
		if p := tr.Progress(); p.TasksCommitted != 2 {
			t.Fatalf("committed %d, want 2 (task 0 kept, task 2 excused)", p.TasksCommitted)
		}
	})
	t.Run("a fallback replays what the node held, once", func(t *testing.T) {
		tr := setup(t)
		if _, _, err := tr.HandOver(1, "c", []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		replay, err := tr.FallBack("c")
		if err != nil || !slices.Equal(replay, []uint64{0}) {
			t.Fatalf("FallBack: %v %v, want [0]", replay, err)
		}
		if again, err := tr.FallBack("c"); err != nil || len(again) != 0 {
			t.Fatalf("second FallBack: %v %v, want nothing", again, err)
		}
		if got := tr.Pending(); !slices.Equal(got, []uint64{0, 1, 3}) {
			t.Fatalf("pending %v, want [0 1 3]", got)
		}
	})
	t.Run("after the seal", func(t *testing.T) {
		tr := setup(t)
		must(t)(tr.Committed("c", 1, 0, data))
		must(t)(tr.Committed("c", 2, 0, Totals{}))
		must(t)(tr.TaskDone(3, 0, "a", map[string]Totals{}))
		must(t)(tr.Committed("a", 3, 0, Totals{}))
		must(t)(tr.Committed("b", 3, 0, Totals{}))
		d, err := tr.Committed("c", 3, 0, Totals{})
		if err != nil || !d.Seal {
			t.Fatalf("want the seal: %v %+v", err, d)
		}
		replay, _, err := tr.HandOver(1, "c", []string{"a", "b"})
		if err != nil || len(replay) != 0 || tr.Phase() != Sealed {
			t.Fatalf("HandOver after the seal: %v %v %s, want no replay, still sealed", replay, err, tr.Phase())
		}
		replay, err = tr.FallBack("c")
		if err != nil || !slices.Equal(replay, []uint64{0, 1}) || tr.Phase() != Running {
			t.Fatalf("FallBack after the seal: %v %v %s, want [0 1], reopened", replay, err, tr.Phase())
		}
	})
	t.Run("unknown node", func(t *testing.T) {
		tr := setup(t)
		if _, err := tr.FallBack("z"); !errors.Is(err, ErrUnknownReceiver) {
			t.Fatalf("FallBack(z): %v", err)
		}
	})
}
