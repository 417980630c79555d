package receiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// wholeFixture is a receiver on node "a" of a dataframe shuffle of 2 tasks
// and 6 partitions over nodes a and b, with on_differ onDiffer; spilled
// keeps (almost) nothing in memory: every piece goes to badger.
func wholeFixture(t *testing.T, onDiffer string, spilled bool) (*fixture, *spill.Store) {
	t.Helper()
	cfg := spill.Config{MemoryLimit: 1 << 22}
	if spilled {
		cfg = spill.Config{MemoryLimit: 1 << 10, Dir: t.TempDir()}
	}
	return dataframeFixture(t, cfg, 2, onDiffer)
}

// attemptMsg is (task, attempt)'s rows (generated from seed) hashed on
// their key, in entries of at most 100 input rows: each entry holds the rows
// of the partitions a holds now, and the attempt's end marker their row
// sums.
func attemptMsg(t *testing.T, f *fixture, epoch, task uint64, attempt uint32, seed uint64) *shard.Msg {
	t.Helper()
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 2000, Seed: seed, KeyCardinality: 1 << 10, PayloadBytes: 8}, int(task), 2)
	defer rec.Release()
	pr, err := table.NewPartitioner(rec.Schema(), f.sh.Spec.Rule, f.sh.Spec.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	held := f.sh.Route().Held
	m := &shard.Msg{Shuffle: "s", Epoch: epoch}
	var sums table.RowSums
	for lo := int64(0); lo < rec.NumRows(); lo += 100 {
		part := rec.NewSlice(lo, min(lo+100, rec.NumRows()))
		pids, err := pr.Partition(part, nil)
		if err == nil {
			err = sums.Add(part, pids)
		}
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := heldEntry(t, part, pids, held); ok {
			e.Task, e.Attempt, e.Seq = task, attempt, uint32(len(m.Entries))
			m.Entries = append(m.Entries, e)
		}
		part.Release()
	}
	end := shard.End{Task: task, Attempt: attempt, Pieces: uint32(len(m.Entries))}
	held.ForEach(func(p int) bool {
		if rows, sum := sums.Of(p); rows > 0 {
			end.Sums = append(end.Sums, shard.PartSum{Partition: uint32(p), Rows: rows, Sum: sum})
		}
		return true
	})
	m.Ends = []shard.End{end}
	return m
}

// heldEntry is the rows of rec (of partitions pids) whose partitions are in
// held, as one entry; false if there are none.
func heldEntry(t *testing.T, rec arrow.Record, pids []uint32, held *dedup.Bitset) (shard.Entry, bool) {
	t.Helper()
	groupOf := make([]int, 6)
	for p := range groupOf {
		groupOf[p] = 1 - btoi(held.Has(p))
	}
	groups, err := table.Split(nil, rec, pids, groupOf, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer table.ReleaseGroups(groups)
	g := groups[0]
	if g.Rec == nil {
		return shard.Entry{}, false
	}
	codec, _ := table.NewCodec(table.GenSchema(), nil)
	data, err := codec.AppendRecord(nil, g.Rec)
	if err != nil {
		t.Fatal(err)
	}
	e := shard.Entry{Data: data}
	for _, r := range g.Runs {
		e.Runs = append(e.Runs, shard.Run{Partition: r.Partition, Count: uint64(r.Rows)})
	}
	return e, true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readValues reads every partition of f's shuffle and returns each row id's
// value, failing on a row read twice.
func readValues(t *testing.T, f *fixture) map[int64]float64 {
	t.Helper()
	out := map[int64]float64{}
	for p := range f.sh.Spec.Partitions {
		err := f.rc.Get(context.Background(), f.sh, p, func(rec arrow.Record) error {
			ids, vals := rec.Column(1).(*array.Int64), rec.Column(2).(*array.Float64)
			for i := range ids.Len() {
				if _, dup := out[ids.Value(i)]; dup {
					return fmt.Errorf("row %d read twice", ids.Value(i))
				}
				out[ids.Value(i)] = vals.Value(i)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("read partition %d: %v", p, err)
		}
	}
	return out
}

// valuesOf is the id -> value of task's rows generated from seed.
func valuesOf(task int, seed uint64) map[int64]float64 {
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 2000, Seed: seed, KeyCardinality: 1 << 10, PayloadBytes: 8}, task, 2)
	defer rec.Release()
	out := map[int64]float64{}
	ids, vals := rec.Column(1).(*array.Int64), rec.Column(2).(*array.Float64)
	for i := range ids.Len() {
		out[ids.Value(i)] = vals.Value(i)
	}
	return out
}

// TestReplayWhole: task 0 commits on a in epoch 0, b is lost, and task 0's
// replay (attempt 1) sends rows to every partition a holds in epoch 1, as
// does task 1's, which does not differ.
// With on_differ replay_whole and a replay that differs, a serves the
// replay's rows of task 0 for every partition, none of the first
// attempt's, and task 1's rows as they were; by default the difference is
// reported; a replay that does not differ changes nothing. Rows accumulated
// in memory and pieces spilled to badger are both dropped exactly.
func TestReplayWhole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onDiffer string
		changes  bool
		spilled  bool
	}{
		{name: "replay whole, in memory", onDiffer: spec.OnDifferReplayWhole, changes: true},
		{name: "replay whole, spilled", onDiffer: spec.OnDifferReplayWhole, changes: true, spilled: true},
		{name: "replay whole, deterministic replay", onDiffer: spec.OnDifferReplayWhole},
		{name: "fail by default", changes: true},
		{name: "deterministic replay by default", spilled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, store := wholeFixture(t, tc.onDiffer, tc.spilled)
			ctx := context.Background()
			for task := range uint64(2) {
				if err := f.rc.Receive(ctx, f.sh, attemptMsg(t, f, 0, task, 0, 1)); err != nil {
					t.Fatal(err)
				}
			}
			moveEpoch(t, f.sh.State, "b")
			seed := uint64(1)
			if tc.changes {
				seed = 2
			}
			// Task 1 sent rows to b too: its replay does not differ.
			for task, seed := range []uint64{seed, 1} {
				if err := f.rc.Receive(ctx, f.sh, attemptMsg(t, f, 1, uint64(task), 1, seed)); err != nil {
					t.Fatal(err)
				}
			}
			if len(f.commits) != 4 || f.commits[3].Replaced != nil || f.commits[3].Differs != nil {
				t.Fatalf("commits %+v, want 4, the last neither replaced nor differing", f.commits)
			}
			last := f.commits[2]
			whole := tc.changes && tc.onDiffer == spec.OnDifferReplayWhole
			if (last.Replaced != nil) != whole || (last.Differs != nil) != (tc.changes && !whole) {
				t.Fatalf("replay's commit: replaced %+v, differs %+v", last.Replaced, last.Differs)
			}
			if tc.spilled && store.Stats().SpilledPieces == 0 {
				t.Fatal("nothing spilled")
			}
			if last.Differs != nil {
				return // the coordinator fails the shuffle
			}
			f.sh.Finish(shuffle.Sealed, nil)
			checkValues(t, readValues(t, f), valuesOf(0, seed), valuesOf(1, 1))
		})
	}
}

// checkValues checks that got holds exactly the rows of wants.
func checkValues(t *testing.T, got map[int64]float64, wants ...map[int64]float64) {
	t.Helper()
	n := 0
	for _, want := range wants {
		n += len(want)
		for id, v := range want {
			if g, ok := got[id]; !ok || g != v {
				t.Fatalf("row %d: read %v (%t), want %v", id, g, ok, v)
			}
		}
	}
	if len(got) != n {
		t.Fatalf("%d rows read, want %d", len(got), n)
	}
}
