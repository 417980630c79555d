package receiver

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// TestAccumulateInChunks: a partition whose first guess of its size is far
// too small (every entry a few rows of a task put in many batches) takes
// new chunks, doubling its capacity, instead of moving what it holds; read
// back in key order, the chunks hold every run once, as appended.
func TestAccumulateInChunks(t *testing.T) {
	const tasks, rows = 64, 50
	recs := make([]arrow.Record, tasks)
	for i := range recs {
		recs[i] = table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: tasks * rows, PayloadBytes: 8, Seed: 3}, i, tasks)
		defer recs[i].Release()
	}
	first, err := table.NewAppender(recs[0].Schema())
	if err != nil {
		t.Fatal(err)
	}
	sh := &Shuffle{State: &shuffle.State{Spec: &spec.Spec{Tasks: tasks}}}
	a := accWith(first)
	sh.accs.byPart = []*partAcc{a}
	presize := func(n int64) int64 { return n } // a guess of one run
	for _, task := range rand.New(rand.NewPCG(1, 2)).Perm(tasks) {
		e := &shard.Entry{Task: uint64(task), Runs: []shard.Run{{Partition: 0, Count: rows}}}
		appendRuns([]*partAcc{a}, e, table.ViewOf(recs[task]), presize)
	}
	if n := len(a.chunks); n < 2 || n > 8 {
		t.Errorf("%d chunks for %d runs of one run's guess, want 2-8 (capacity doubling)", n, tasks)
	}
	for i, c := range a.chunks[:len(a.chunks)-1] {
		if !c.Room(0) || c.Room(1) {
			t.Errorf("chunk %d of %d was left with room, or grew past its presize", i, len(a.chunks))
		}
	}
	chunks, cols, segs := sh.snapshot(0)
	defer releaseAll(chunks)
	ranges := make([]table.RowRange, len(segs))
	for i, s := range segs {
		ranges[i] = table.RowRange{Rec: chunks[s.chunk], Off: s.off, Rows: int64(s.rows), Cols: cols[s.chunk]}
	}
	got, err := table.ConcatRanges(nil, recs[0].Schema(), ranges)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want, err := table.Concat(nil, recs)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("the chunks read in key order hold %d rows that differ from the %d appended in task order", got.NumRows(), want.NumRows())
	}
}

// TestSortedSegs checks sortedSegs against a comparison sort: segments of
// one partition from many tasks or few, with retries and several seqs per
// task, with tasks spread over a span far wider than the segments (a
// shuffle of 10,000 tasks whose partition has rows of a few hundred), in
// key order already or nearly, and with a task out of the spec's range.
// Each segment is told apart by its offset, so the result must be the same
// segments, each once, in key order.
func TestSortedSegs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 600 {
		tasks, n := 1+rng.IntN(300), rng.IntN(700)
		if iter%3 == 1 {
			tasks = 1 + rng.IntN(1<<40) // sparse: few segments of many tasks
		}
		segs := make([]accSeg, n)
		for i := range segs {
			task := uint64(rng.IntN(tasks))
			if iter%50 == 0 && i == n/2 {
				task = uint64(tasks + rng.IntN(3)) // out of range
			}
			segs[i] = accSeg{task: task, attempt: uint32(rng.IntN(3)), seq: uint32(rng.IntN(4)), off: int64(i)}
		}
		if iter%3 == 2 { // in key order, or but for one swap
			slices.SortFunc(segs, compareSegs)
			if n > 1 && iter%2 == 0 {
				i := rng.IntN(n - 1)
				segs[i], segs[i+1] = segs[i+1], segs[i]
			}
		}
		checkSortedSegs(t, iter, segs)
	}
}

func checkSortedSegs(t *testing.T, iter int, segs []accSeg) {
	t.Helper()
	in := slices.Clone(segs)
	got := sortedSegs(segs)
	if !slices.Equal(segs, in) {
		t.Fatalf("iter %d: the segments given were changed", iter)
	}
	if !slices.IsSortedFunc(got, compareSegs) {
		t.Fatalf("iter %d (%d segments): not in key order", iter, len(segs))
	}
	seen := make(map[int64]bool, len(segs))
	for _, s := range got {
		if seen[s.off] {
			t.Fatalf("iter %d: segment %d twice", iter, s.off)
		}
		seen[s.off] = true
	}
	if len(got) != len(segs) {
		t.Fatalf("iter %d: %d segments, want %d", iter, len(got), len(segs))
	}
}

// TestAccSegSize: a segment is 32 bytes, two to a cache line.
func TestAccSegSize(t *testing.T) {
	if n := unsafe.Sizeof(accSeg{}); n != 32 {
		t.Fatalf("accSeg is %d bytes, want 32", n)
	}
}

// TestPresizerTakesTheRowsHint: a task put in many batches sends each
// receiver many small entries, and the guess from one entry (its rows per
// run times the tasks) is a fraction of a partition; the spec's Rows, when
// given, is the guess instead (its share per partition and a margin), still
// within the node's budget.
func TestPresizerTakesTheRowsHint(t *testing.T) {
	const tasks, parts, batches, runRows = 16, 8, 16, 100
	store, err := spill.Open(spill.Config{MemoryLimit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	rc := New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator})
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// One entry: batch 1 of 16 of one task, runRows rows for each partition.
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: parts * runRows, PayloadBytes: 8, Seed: 1}, 0, 1)
	defer rec.Release()
	e := &shard.Entry{Data: make([]byte, 32*rec.NumRows())}
	for p := range parts {
		e.Runs = append(e.Runs, shard.Run{Partition: uint32(p), Count: runRows})
	}
	wantRows := int64(tasks * batches * runRows) // each partition's rows in all
	for _, tc := range []struct {
		hint     int64
		min, max int64
	}{
		{0, tasks * runRows, 2 * tasks * runRows},        // one entry per task assumed: 1/16 of the partition
		{wantRows * parts, wantRows, wantRows * 11 / 10}, // the hint's share, with a margin
		{1 << 40, 1 << 20, 1 << 26},                      // a hint past the budget: the budget's share
	} {
		sp := &spec.Spec{ID: "s", Kind: spec.Dataframe, Tasks: tasks, Partitions: parts, Rows: tc.hint,
			Schema: codec.SchemaBytes(), Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}}
		st, err := shuffle.New(sp, "a", []string{"a"}, nil, "a")
		if err != nil {
			t.Fatal(err)
		}
		if got := rc.presizer(NewShuffle(st, nil), e, rec)(1); got < tc.min || got > tc.max {
			t.Errorf("rows hint %d: a partition presized for %d rows, want %d..%d", tc.hint, got, tc.min, tc.max)
		}
	}
}

// TestFitsAllChecksColumnsNearTheLimit: a run goes to a chunk without a
// look at its columns while the chunk's bytes and the entry's values stay
// under 32-bit offsets; past that the columns decide (here they have
// room, whatever the bytes claim).
func TestFitsAllChecksColumnsNearTheLimit(t *testing.T) {
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 100, PayloadBytes: 8, Seed: 1}, 0, 1)
	defer rec.Release()
	app, err := table.NewAppender(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	cols := table.ViewOf(rec)
	a := accWith(app)
	runs := []shard.Run{{Partition: 0, Count: 100}}
	for _, bytes := range []int64{0, math.MaxInt32 - 10} {
		a.bytes = bytes
		if !fitsAll([]*partAcc{a}, runs, cols) {
			t.Errorf("chunk bytes %d: a run of 100 rows into an empty chunk does not fit", bytes)
		}
	}
	if fitsAll([]*partAcc{a}, []shard.Run{{Partition: 0, Count: math.MaxInt32 + 1}}, cols) {
		t.Error("a run longer than a segment's count fits")
	}
}

// accWith returns an accumulator whose first chunk is app.
func accWith(app *table.Appender) *partAcc {
	return &partAcc{chunks: []*table.Appender{app}, bytes: app.Bytes()}
}
