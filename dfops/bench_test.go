package dfops

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

func recordBytes(recs ...arrow.Record) int64 {
	var n int64
	for _, r := range recs {
		n += table.RecordBytes(r)
	}
	return n
}

// BenchmarkHashJoin joins 1M left rows with 250K right rows on an int64 key
// (the right keys unique, so the inner join has 1M rows), with and without a
// key held by 30% of the left rows.
func BenchmarkHashJoin(b *testing.B) {
	const nl, nr = 1 << 20, 1 << 18
	for _, skew := range []bool{false, true} {
		b.Run(fmt.Sprintf("skew=%v", skew), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			lkey := func(rng *rand.Rand, _ int) any {
				if skew && rng.IntN(10) < 3 {
					return 0
				}
				return rng.IntN(nr)
			}
			left := buildRecord(b, memory.DefaultAllocator, rng, nl, []testCol{{"k", arrow.PrimitiveTypes.Int64, lkey},
				{"v", arrow.PrimitiveTypes.Float64, rowFloat}})
			defer left.Release()
			right := buildRecord(b, memory.DefaultAllocator, rng, nr, []testCol{{"k", arrow.PrimitiveTypes.Int64, rowID},
				{"name", arrow.BinaryTypes.String, rowName}})
			defer right.Release()
			b.Run("whole", func(b *testing.B) {
				b.SetBytes(recordBytes(left, right))
				b.ReportAllocs()
				for b.Loop() {
					out, err := HashJoin(nil, left, right, DefaultJoinSpec("k"))
					if err != nil || out.NumRows() != nl {
						b.Fatalf("%v rows, %v", out.NumRows(), err)
					}
					out.Release()
				}
				b.ReportMetric(float64(nl)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
			b.Run("stream", func(b *testing.B) { benchStreamJoin(b, left, right, nl) })
		})
	}
}

// benchStreamJoin joins left, in records of 64Ki rows as a node reads a
// partition, with right held whole (StreamJoin).
func benchStreamJoin(b *testing.B, left, right arrow.Record, nl int64) {
	var parts []arrow.Record
	for off := int64(0); off < left.NumRows(); off += DefaultBatchRows {
		parts = append(parts, left.NewSlice(off, min(off+DefaultBatchRows, left.NumRows())))
	}
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	b.SetBytes(recordBytes(left, right))
	b.ReportAllocs()
	for b.Loop() {
		var rows int64
		sj, err := NewStreamJoin(nil, left.Schema(), right.Schema(), right, DefaultJoinSpec("k"), 0, func(rec arrow.Record) error {
			rows += rec.NumRows()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range parts {
			if err := sj.Add(p); err != nil {
				b.Fatal(err)
			}
		}
		if err := sj.Finish(); err != nil || rows != nl {
			b.Fatalf("%d rows, %v", rows, err)
		}
		sj.Release()
	}
	b.ReportMetric(float64(nl)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkSortStable sorts 1M rows by an int64 and by a string column.
func BenchmarkSortStable(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(2, 2))
	rec := buildRecord(b, memory.DefaultAllocator, rng, n, []testCol{{"i", arrow.PrimitiveTypes.Int64, withNulls(func(rng *rand.Rand, _ int) any { return rng.IntN(n) })},
		{"s", arrow.BinaryTypes.String, func(rng *rand.Rand, _ int) any { return fmt.Sprint(rng.IntN(n)) }}})
	defer rec.Release()
	for _, col := range []string{"i", "s"} {
		b.Run(col, func(b *testing.B) {
			b.SetBytes(recordBytes(rec))
			b.ReportAllocs()
			for b.Loop() {
				out, err := SortStable(nil, rec, col)
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkSortPartition sorts what a node sorts 1000 times in a
// 1000-partition set-index of 16M rows: 16K rows of an int64 key (one
// partition's range of random keys, no nulls), an int64 id, a float64 and
// an 8-byte string.
func BenchmarkSortPartition(b *testing.B) {
	const n = 16 << 10
	rng := rand.New(rand.NewPCG(3, 3))
	base := rng.Int64N(1 << 40)
	rec := buildRecord(b, memory.DefaultAllocator, rng, n, []testCol{
		{"key", arrow.PrimitiveTypes.Int64, func(rng *rand.Rand, _ int) any { return int(base + rng.Int64N(1<<30)) }},
		{"id", arrow.PrimitiveTypes.Int64, func(rng *rand.Rand, i int) any { return i }},
		{"val", arrow.PrimitiveTypes.Float64, func(rng *rand.Rand, i int) any { return float64(i) / 3 }},
		{"tag", arrow.BinaryTypes.String, func(rng *rand.Rand, _ int) any { return fmt.Sprintf("t%07d", rng.IntN(1e7)) }}})
	defer rec.Release()
	b.SetBytes(recordBytes(rec))
	b.ReportAllocs()
	for b.Loop() {
		out, err := SortStable(nil, rec, "key")
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
