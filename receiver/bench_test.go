package receiver

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/table"
)

// BenchmarkCoalesce measures what coalescing pieces per (destination,
// partition) across tasks on the sender would buy the receiver, and what
// it would cost the sender. The same rows (one destination's share of 64
// tasks over 250 partitions, rows of the demo's shape: 4 rows per task and
// partition, as in its 1000 -> 1000 shuffle) reach the receiver's
// accumulators (appendRuns):
//
//   - append/rows=4: one entry per task, runs of 4 rows (today);
//   - append/rows=16, rows=64: entries of 4 or 16 tasks coalesced, runs of
//     16 or 64 rows, each run still recording one segment (exactly once
//     per (task, partition) would need one per task: this is the most such
//     coalescing can save here);
//   - gather+append/tasks=4, tasks=16: the same, plus the sender's gather
//     of 4 or 16 tasks' entries into one in partition order
//     (table.ConcatRanges), which coalescing at send time would add.
//
// MB/s is of the rows' bytes; ns/run is per run as the sender cut them
// (one per task and partition).
func BenchmarkCoalesce(b *testing.B) {
	const parts, tasks, rows = 250, 64, 4
	in := newCoalesceInput(b, parts, tasks, rows)
	defer in.release()
	for _, k := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("append/rows=%d", rows*k), func(b *testing.B) {
			es, cols, recs := in.coalesced(b, k)
			defer releaseAll(recs)
			benchAppend(b, in, func() { appendAll(b, in, es, cols) })
		})
	}
	for _, k := range []int{4, 16} {
		b.Run(fmt.Sprintf("gather+append/tasks=%d", k), func(b *testing.B) {
			benchAppend(b, in, func() {
				es, cols, recs := in.coalesced(b, k)
				appendAll(b, in, es, cols)
				releaseAll(recs)
			})
		})
	}
}

// BenchmarkAppendTinyRuns appends runs of one row each (rows of 12-byte
// payloads): one destination's share of 16 tasks over 2,500 partitions,
// as in a 10,000 x 10,000 shuffle of 100 MiB on 4 nodes, where each task
// has about one row per partition and the cost per run is all there is.
func BenchmarkAppendTinyRuns(b *testing.B) {
	in := newInput(b, 2500, 16, 1, 12)
	defer in.release()
	es, cols, _ := in.coalesced(b, 1)
	benchAppend(b, in, func() { appendAll(b, in, es, cols) })
}

// coalesceInput is one destination's share of tasks: entry i is task i's
// rows for parts partitions, rows each, in partition order.
type coalesceInput struct {
	parts, rows int
	schema      *arrow.Schema // every record's, and the accumulators'
	recs        []arrow.Record
	bytes       int64
}

func newCoalesceInput(b *testing.B, parts, tasks, rows int) *coalesceInput {
	return newInput(b, parts, tasks, rows, 100)
}

// newInput is newCoalesceInput with rows of payload bytes of payload.
func newInput(b *testing.B, parts, tasks, rows, payload int) *coalesceInput {
	in := &coalesceInput{parts: parts, rows: rows, schema: table.GenSchema(), recs: make([]arrow.Record, tasks)}
	gen := table.GenConfig{Rows: int64(parts * tasks * rows), PayloadBytes: payload, Seed: 1}
	for i := range in.recs {
		r := table.GenTask(memory.DefaultAllocator, gen, i, tasks)
		// one schema, as a codec's decoded records share theirs (else
		// ConcatRanges resolves every range's columns)
		in.recs[i] = array.NewRecord(in.schema, r.Columns(), r.NumRows())
		r.Release()
		in.bytes += table.RecordBytes(in.recs[i])
	}
	return in
}

func (in *coalesceInput) release() {
	releaseAll(in.recs)
}

// coalesced returns the entries of k tasks each, their rows gathered in
// partition order, their column views and the records it built, for the
// caller to release. k = 1 returns the tasks' own.
func (in *coalesceInput) coalesced(b *testing.B, k int) ([]shard.Entry, [][]table.ColumnView, []arrow.Record) {
	n := len(in.recs) / k
	es, cols := make([]shard.Entry, n), make([][]table.ColumnView, n)
	var built []arrow.Record
	for i := range es {
		es[i] = shard.Entry{Task: uint64(i), Runs: make([]shard.Run, in.parts)}
		for p := range es[i].Runs {
			es[i].Runs[p] = shard.Run{Partition: uint32(p), Count: uint64(k * in.rows)}
		}
		if k == 1 {
			cols[i] = table.ViewOf(in.recs[i])
			continue
		}
		rec := in.gather(b, in.recs[i*k:(i+1)*k])
		built = append(built, rec)
		cols[i] = table.ViewOf(rec)
	}
	return es, cols, built
}

// gather builds one record of recs' rows in partition order: partition
// p's rows of each task in turn, as a sender coalescing them would.
func (in *coalesceInput) gather(b *testing.B, recs []arrow.Record) arrow.Record {
	views := make([][]table.ColumnView, len(recs))
	for t, r := range recs {
		views[t] = table.ViewOf(r)
	}
	ranges := make([]table.RowRange, 0, in.parts*len(recs))
	for p := range in.parts {
		for t, r := range recs {
			ranges = append(ranges, table.RowRange{Rec: r, Off: int64(p * in.rows), Rows: int64(in.rows), Cols: views[t]})
		}
	}
	rec, err := table.ConcatRanges(nil, in.schema, ranges)
	if err != nil {
		b.Fatal(err)
	}
	return rec
}

// benchAppend times op, which appends every row once to fresh
// accumulators.
func benchAppend(b *testing.B, in *coalesceInput, op func()) {
	b.SetBytes(in.bytes)
	b.ReportAllocs()
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*int64(in.parts*len(in.recs))), "ns/run")
}

// appendAll appends entries es (with column views cols) to fresh
// accumulators of in's partitions, each presized for its share.
func appendAll(b *testing.B, in *coalesceInput, es []shard.Entry, cols [][]table.ColumnView) {
	accs := make([]*partAcc, in.parts)
	for p := range accs {
		app, err := table.NewAppender(in.schema)
		if err != nil {
			b.Fatal(err)
		}
		accs[p] = accWith(app)
	}
	per := int64(len(in.recs) * in.rows)
	presize := func(n int64) int64 { return max(n, per+per/8) }
	for i := range es {
		appendRuns(accs, &es[i], cols[i], presize)
	}
}
