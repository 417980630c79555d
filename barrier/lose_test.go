package barrier

import (
	"errors"
	"slices"
	"testing"
)

func TestLose(t *testing.T) {
	data := Totals{Pieces: 1, Rows: 5, Bytes: 50, Checksum: 9}
	setup := func(t *testing.T) *Tracker {
		tr, err := New(Config{Shuffle: "s", Tasks: 3, Receivers: []string{"a", "b", "c"}})
		if err != nil {
			t.Fatal(err)
		}
		// task 0 sent data to c and is fully committed; task 1 sent c nothing
		// and waits for c's commit; task 2 is not done.
		must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data, "c": data}))
		for _, r := range []string{"a", "b", "c"} {
			held := Totals{}
			if r != "b" {
				held = data
			}
			must(t)(tr.Committed(r, 0, 0, held))
		}
		must(t)(tr.TaskDone(1, 0, "b", map[string]Totals{"a": data}))
		must(t)(tr.Committed("a", 1, 0, data))
		must(t)(tr.Committed("b", 1, 0, Totals{}))
		return tr
	}
	t.Run("replays what the lost node held", func(t *testing.T) {
		tr := setup(t)
		replay, d, err := tr.Lose(1, "c", []string{"a", "b"})
		if err != nil || d != (Decision{}) {
			t.Fatalf("Lose: %v %+v", err, d)
		}
		if !slices.Equal(replay, []uint64{0}) {
			t.Fatalf("replay %v, want [0]", replay)
		}
		if got := tr.Pending(); !slices.Equal(got, []uint64{0, 2}) {
			t.Fatalf("pending %v, want [0 2]", got)
		}
		p := tr.Progress()
		if p.TasksDone != 1 || p.TasksCommitted != 1 || p.Totals != data {
			t.Fatalf("progress after loss %+v", p)
		}
	})
	t.Run("a replay knows the epoch of the attempt it replaces", func(t *testing.T) {
		tr := setup(t)
		if _, _, err := tr.Lose(1, "c", []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		for task, want := range []struct {
			epoch int
			ok    bool
		}{{0, true}, {0, false}, {0, false}} {
			if e, ok := tr.Undone(uint64(task)); e != want.epoch || ok != want.ok {
				t.Errorf("Undone(%d) = %d, %v; want %d, %v", task, e, ok, want.epoch, want.ok)
			}
		}
		// The replay is done in epoch 1 and taken back by a second loss: the
		// next replay replaces epoch 1's attempt.
		must(t)(tr.TaskDone(0, 1, "a", map[string]Totals{"b": data}))
		if _, ok := tr.Undone(0); ok {
			t.Error("Undone(0) reports a task that is done again")
		}
		if _, _, err := tr.Lose(2, "b", []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if e, ok := tr.Undone(0); e != 1 || !ok {
			t.Errorf("after the second loss Undone(0) = %d, %v; want 1, true", e, ok)
		}
	})
	t.Run("replay and the rest seal in the new epoch", func(t *testing.T) {
		tr := setup(t)
		if _, _, err := tr.Lose(1, "c", []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		for _, task := range []uint64{0, 2} {
			must(t)(tr.TaskDone(task, 1, "a", map[string]Totals{"b": data}))
			must(t)(tr.Committed("a", task, 1, Totals{}))
			d, err := tr.Committed("b", task, 1, data)
			if err != nil {
				t.Fatal(err)
			}
			if d.Seal != (task == 2) {
				t.Fatalf("task %d: seal = %v", task, d.Seal)
			}
		}
		if _, err := tr.Committed("c", 2, 1, Totals{}); !errors.Is(err, ErrSealed) && err != nil {
			t.Fatalf("late commit from the lost node: %v", err)
		}
	})
	t.Run("loss of the last awaited receiver with no data seals", func(t *testing.T) {
		tr, _ := New(Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", "b"}})
		must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data}))
		must(t)(tr.Committed("a", 0, 0, data))
		replay, d, err := tr.Lose(1, "b", []string{"a"})
		if err != nil || len(replay) != 0 || !d.Seal {
			t.Fatalf("Lose = %v %+v %v, want a seal and no replay", replay, d, err)
		}
	})
	t.Run("a sealed tracker reopens", func(t *testing.T) {
		tr, _ := New(Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", "b"}})
		must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data, "b": data}))
		must(t)(tr.Committed("a", 0, 0, data))
		if d, _ := tr.Committed("b", 0, 0, data); !d.Seal {
			t.Fatal("not sealed")
		}
		replay, d, err := tr.Lose(1, "b", []string{"a"})
		if err != nil || !slices.Equal(replay, []uint64{0}) || d.Seal || tr.Phase() != Running {
			t.Fatalf("Lose after seal = %v %+v %v, phase %v", replay, d, err, tr.Phase())
		}
		must(t)(tr.TaskDone(0, 1, "a", map[string]Totals{"a": data}))
		if d, _ := tr.Committed("a", 0, 1, data); !d.Seal {
			t.Fatal("the replay did not seal again")
		}
	})
	t.Run("excuse replays nothing and can seal", func(t *testing.T) {
		tr, _ := New(Config{Shuffle: "s", Tasks: 2, Receivers: []string{"a", "b", "c"}})
		for task := range uint64(2) {
			must(t)(tr.TaskDone(task, 0, "a", map[string]Totals{"a": data, "b": data, "c": data}))
			must(t)(tr.Committed("a", task, 0, data))
		}
		must(t)(tr.Committed("b", 0, 0, data))
		must(t)(tr.Committed("b", 1, 0, data))
		d, err := tr.Excuse(1, "c", []string{"a", "b"})
		if err != nil || !d.Seal || len(tr.Pending()) != 0 {
			t.Fatalf("Excuse = %+v %v, pending %v; want a seal, nothing pending", d, err, tr.Pending())
		}
	})
	t.Run("a sealed tracker losing a node that held nothing stays sealed", func(t *testing.T) {
		tr, _ := New(Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", "b"}})
		must(t)(tr.Committed("b", 0, 0, Totals{}))
		must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data}))
		if d, _ := tr.Committed("a", 0, 0, data); !d.Seal {
			t.Fatal("not sealed")
		}
		replay, _, err := tr.Lose(1, "b", []string{"a"})
		if err != nil || len(replay) != 0 || tr.Phase() != Sealed {
			t.Fatalf("Lose = %v %v, phase %v; want no replay and still sealed", replay, err, tr.Phase())
		}
	})
	t.Run("refusals", func(t *testing.T) {
		tr := setup(t)
		if _, _, err := tr.Lose(1, "z", []string{"a"}); !errors.Is(err, ErrUnknownReceiver) {
			t.Fatalf("unknown lost node: %v", err)
		}
		if _, _, err := tr.Lose(0, "c", []string{"a"}); !errors.Is(err, ErrStaleEpoch) {
			t.Fatalf("stale epoch: %v", err)
		}
		if _, _, err := tr.Lose(1, "c", []string{"a", "c"}); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("lost node among survivors: %v", err)
		}
		if got := tr.Pending(); !slices.Equal(got, []uint64{2}) {
			t.Fatalf("a refused Lose changed the tracker: pending %v", got)
		}
	})
}

// must returns a checker of one event's outcome: no error, no failure.
func must(t *testing.T) func(Decision, error) {
	return func(d Decision, err error) {
		t.Helper()
		if err != nil || d.Fail != nil {
			t.Fatalf("event: %v %v", err, d.Fail)
		}
	}
}

// TestLoseBeforeCommits: a task reported done whose receivers had not all
// reported their commits when a receiver it sent data to is lost is
// replayed whole (Undone is false): a receiver that did not commit yet may
// never commit the old attempt (its entries may still be in flight, and
// an attempt of an older epoch never commits), so nothing of the old
// attempt is kept for sure there.
func TestLoseBeforeCommits(t *testing.T) {
	data := Totals{Pieces: 1, Rows: 5, Bytes: 50, Checksum: 9}
	tr, err := New(Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", "b", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	must(t)(tr.TaskDone(0, 0, "a", map[string]Totals{"a": data, "b": data, "c": data}))
	must(t)(tr.Committed("a", 0, 0, data)) // b's commit is still to come
	replay, _, err := tr.Lose(1, "c", []string{"a", "b"})
	if err != nil || !slices.Equal(replay, []uint64{0}) {
		t.Fatalf("Lose: replay %v, %v; want [0]", replay, err)
	}
	if e, ok := tr.Undone(0); ok {
		t.Errorf("Undone(0) = %d, true: the replay would skip b's partitions, which b may never commit", e)
	}
}
