package receiver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// BenchmarkSortedSegs sorts one partition's segments as a read does: n
// segments of distinct tasks out of tasks, in the order of parallel puts
// (random), one attempt and seq each. 260 of 10,000 is a partition of the
// 10,000 x 10,000 demo of 100 MiB (one row per segment); 1,600 of 10,000
// one of 1.6 M rows; 1,000 of 1,000 the 1,000 x 1,000 case.
func BenchmarkSortedSegs(b *testing.B) {
	for _, c := range []struct{ n, tasks int }{{260, 10000}, {1600, 10000}, {1000, 1000}, {26, 1000}} {
		b.Run(fmt.Sprintf("segs=%d/tasks=%d", c.n, c.tasks), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			segs := make([]accSeg, c.n)
			for i, t := range rng.Perm(c.tasks)[:c.n] {
				segs[i] = accSeg{task: uint64(t), off: int64(i), rows: 1}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sortedSegs(segs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/seg")
		})
	}
}

// BenchmarkGetSmallPartitions reads every partition of a shuffle of 64
// tasks over 4,000 partitions of about 64 rows each (one row per task and
// partition: the shape of a read of many small partitions), accumulated
// on one node. ns/partition is the cost of one partition's read.
func BenchmarkGetSmallPartitions(b *testing.B) {
	const parts = 4000
	rc, sh, rows := smallPartitions(b, parts)
	b.ReportAllocs()
	b.SetBytes(rows * 32)
	b.ResetTimer()
	for range b.N {
		for p := range parts {
			if err := rc.Get(context.Background(), sh, p, func(r arrow.Record) error { r.Release(); return nil }); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parts), "ns/partition")
}

// BenchmarkGatherSmallPartitions is BenchmarkGetSmallPartitions' read as
// a packed read does it: each partition's ranges gathered (one Gather for
// them all, as for one DoGet), and one ConcatRanges per 16,384 rows.
func BenchmarkGatherSmallPartitions(b *testing.B) {
	const parts = 4000
	rc, sh, rows := smallPartitions(b, parts)
	b.ReportAllocs()
	b.SetBytes(rows * 32)
	b.ResetTimer()
	for range b.N {
		var g Gather
		for p := range parts {
			if ok, err := rc.GatherPartition(context.Background(), sh, p, &g, 1023, 128<<10); err != nil || !ok {
				b.Fatal(ok, err)
			}
			if g.Rows() >= 1<<14 || p == parts-1 {
				rec, err := table.ConcatRanges(memory.DefaultAllocator, sh.Schema, g.Ranges())
				if err != nil {
					b.Fatal(err)
				}
				rec.Release()
				g.Reset()
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*parts), "ns/partition")
}

// smallPartitions is a sealed shuffle of 64 tasks over parts partitions,
// one row per task and partition (taskMsg's runs of a task of parts
// rows), accumulated on one node, and its rows.
func smallPartitions(b *testing.B, parts int) (*Receiver, *Shuffle, int64) {
	const tasks = 64
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		b.Fatal(err)
	}
	store, err := spill.Open(spill.Config{MemoryLimit: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	rc := New(Config{Store: store, OutputBatchRows: 1 << 16, Allocator: memory.DefaultAllocator, Committed: func(*shuffle.State, Commit) {}})
	sh := frameShuffle(b, codec, tasks, parts)
	gen := table.GenConfig{Rows: int64(tasks * parts), PayloadBytes: 12, Seed: 1}
	for task := range tasks {
		if err := rc.Receive(context.Background(), sh, taskMsg(b, codec, gen, task, tasks, parts)); err != nil {
			b.Fatal(err)
		}
	}
	sh.Finish(shuffle.Sealed, nil)
	b.Cleanup(func() { store.Close() })
	return rc, sh, int64(gen.Rows)
}
