package receiver

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
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
	sh := &Shuffle{}
	a := &partAcc{chunks: []*table.Appender{first}}
	sh.accs.byPart = map[uint32]*partAcc{0: a}
	presize := func(n int64) int64 { return n } // a guess of one run
	for _, task := range rand.New(rand.NewPCG(1, 2)).Perm(tasks) {
		e := &shard.Entry{Task: uint64(task), Runs: []shard.Run{{Partition: 0, Count: rows}}}
		appendRuns(map[uint32]*partAcc{0: a}, e, table.ViewOf(recs[task]), presize)
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
		ranges[i] = table.RowRange{Rec: chunks[s.chunk], Off: s.off, Rows: s.rows, Cols: cols[s.chunk]}
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
