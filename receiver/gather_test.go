package receiver

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// mixedFixture is wholeFixture's shuffle on a store whose budget takes
// the first entries into the accumulators and leaves the later ones as
// pieces, some of them spilled to badger.
func mixedFixture(t *testing.T) (*fixture, *spill.Store) {
	t.Helper()
	return dataframeFixture(t, spill.Config{MemoryLimit: 48 << 10, Dir: t.TempDir()}, 2, "")
}

// TestGatherMatchesGet: partitions of rows of two tasks, each in many
// entries (several segments per task and partition), some accumulated,
// some stored as pieces and some of those spilled, and a second attempt of
// task 0 that committed after the first (the dedup ledger serves none of
// its rows). Gathered into one list for all partitions and copied once,
// every partition's rows are exactly those Get emits, in the same order;
// and those are each row of the first attempts once, with its values.
func TestGatherMatchesGet(t *testing.T) {
	f, store := mixedFixture(t)
	ctx := context.Background()
	for _, m := range [][3]uint64{{0, 0, 1}, {1, 0, 2}, {0, 1, 3}} { // task, attempt, seed
		if err := f.rc.Receive(ctx, f.sh, attemptMsg(t, f, 0, m[0], uint32(m[1]), m[2])); err != nil {
			t.Fatal(err)
		}
	}
	f.sh.Finish(shuffle.Sealed, nil)
	checkMixed(t, f, store)
	var g Gather
	defer g.Reset()
	var parts []int
	var ends []int64
	f.sh.Route().Owned.ForEach(func(p int) bool {
		ok, err := f.rc.GatherPartition(ctx, f.sh, p, &g, 1<<20, 1<<30)
		if err != nil || !ok {
			t.Fatalf("gather partition %d: %v, %v", p, ok, err)
		}
		parts, ends = append(parts, p), append(ends, g.Rows())
		return true
	})
	packed, err := table.ConcatRanges(memory.DefaultAllocator, f.sh.Schema, g.Ranges())
	if err != nil {
		t.Fatal(err)
	}
	defer packed.Release()
	if got := table.RecordBytes(packed); got > g.Bytes() || packed.NumRows() != g.Rows() {
		t.Errorf("gathered %d rows of %d bytes; Gather counted %d rows, %d bytes", packed.NumRows(), got, g.Rows(), g.Bytes())
	}
	seen := map[int64]float64{}
	var from int64
	for i, p := range parts {
		got := packed.NewSlice(from, ends[i])
		want := getAll(t, f, p)
		if !array.RecordEqual(got, want) {
			t.Errorf("partition %d: gathered\n%v\nGet\n%v", p, got, want)
		}
		collectValues(t, want, seen)
		got.Release()
		want.Release()
		from = ends[i]
	}
	checkFirstAttempts(t, seen)
}

// checkMixed fails t unless f's partitions hold accumulated segments,
// pieces in memory and spilled pieces.
func checkMixed(t *testing.T, f *fixture, store *spill.Store) {
	t.Helper()
	var segs, inMem, onDisk int
	f.sh.Route().Owned.ForEach(func(p int) bool {
		if a := f.sh.accumulated(uint32(p)); a != nil {
			segs += len(a.segs)
		}
		_ = store.Scan("s", uint32(p), func(_ spill.Key, mem spill.Value, disk []byte) error {
			if mem != nil {
				inMem++
			} else if disk != nil {
				onDisk++
			}
			return nil
		})
		return true
	})
	if segs == 0 || inMem == 0 || onDisk == 0 {
		t.Fatalf("fixture holds %d accumulated segments, %d pieces in memory, %d spilled: want some of each", segs, inMem, onDisk)
	}
}

// getAll is partition p's rows as Get emits them, in one record.
func getAll(t *testing.T, f *fixture, p int) arrow.Record {
	t.Helper()
	var recs []arrow.Record
	err := f.rc.Get(context.Background(), f.sh, p, func(r arrow.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	ranges := make([]table.RowRange, len(recs))
	for i, r := range recs {
		ranges[i] = table.RowRange{Rec: r, Rows: r.NumRows()}
	}
	out, err := table.ConcatRanges(memory.DefaultAllocator, f.sh.Schema, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// collectValues adds rec's row ids and values to seen, failing on an id
// seen before.
func collectValues(t *testing.T, rec arrow.Record, seen map[int64]float64) {
	t.Helper()
	ids, vals := rec.Column(1).(*array.Int64), rec.Column(2).(*array.Float64)
	for i := range ids.Len() {
		if _, dup := seen[ids.Value(i)]; dup {
			t.Fatalf("row %d read twice", ids.Value(i))
		}
		seen[ids.Value(i)] = vals.Value(i)
	}
}

// checkFirstAttempts fails t unless seen holds rows of the first
// attempts only (task 0 of seed 1, task 1 of seed 2), and some of each.
func checkFirstAttempts(t *testing.T, seen map[int64]float64) {
	t.Helper()
	want := valuesOf(0, 1)
	for id, v := range valuesOf(1, 2) {
		want[id] = v
	}
	if len(seen) == 0 {
		t.Fatal("no rows read")
	}
	for id, v := range seen {
		if w, ok := want[id]; !ok || w != v {
			t.Fatalf("row %d = %v, want %v (of the first attempts: %v)", id, v, w, ok)
		}
	}
}

// TestGatherLeavesALargePartition: a partition over the bound is not
// gathered, and what was gathered before it stays as it was: one over
// maxRows rows of accumulated rows alone, one whose accumulated rows are
// within the bound but not its stored pieces with them, and one over
// maxBytes.
func TestGatherLeavesALargePartition(t *testing.T) {
	f, _ := mixedFixture(t)
	ctx := context.Background()
	for task := range uint64(2) {
		if err := f.rc.Receive(ctx, f.sh, attemptMsg(t, f, 0, task, 0, task+1)); err != nil {
			t.Fatal(err)
		}
	}
	f.sh.Finish(shuffle.Sealed, nil)
	first, second := -1, -1
	f.sh.Route().Owned.ForEach(func(p int) bool {
		acc, all := f.sh.accumulatedRows(uint32(p)), getAll(t, f, p)
		defer all.Release()
		if first < 0 {
			first = p
		} else if acc > 0 && all.NumRows() > acc {
			second = p
		}
		return second < 0
	})
	if second < 0 {
		t.Fatal("no partition after the first has both accumulated rows and stored pieces")
	}
	var g Gather
	defer g.Reset()
	if ok, err := f.rc.GatherPartition(ctx, f.sh, first, &g, 1<<20, 1<<30); !ok || err != nil {
		t.Fatalf("gather partition %d: %v, %v", first, ok, err)
	}
	rows, bytes, n := g.Rows(), g.Bytes(), len(g.Ranges())
	before := f.sh.Reads()
	acc := f.sh.accumulatedRows(uint32(second))
	for _, b := range []struct{ rows, bytes int64 }{{acc - 1, 1 << 30}, {acc, 1 << 30}, {1 << 20, 1}} {
		if ok, err := f.rc.GatherPartition(ctx, f.sh, second, &g, b.rows, b.bytes); ok || err != nil {
			t.Fatalf("gather of partition %d within %d rows, %d bytes: %v, %v; want not gathered", second, b.rows, b.bytes, ok, err)
		}
		if g.Rows() != rows || g.Bytes() != bytes || len(g.Ranges()) != n || f.sh.Reads() != before {
			t.Fatalf("a partition not gathered changed the gather (%d rows, %d bytes, %d ranges, reads %+v; was %d, %d, %d, %+v)",
				g.Rows(), g.Bytes(), len(g.Ranges()), f.sh.Reads(), rows, bytes, n, before)
		}
	}
}
