package dfops

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkSortIndices sorts the keys set-index sorts (16k int64 in a narrow
// range, as one partition holds: 16 bits wide, and 30 bits, a thousandth of
// the bench's 40-bit keys) and larger columns, with SortIndices and with the
// comparison sort it replaces ("reference").
func BenchmarkSortIndices(b *testing.B) {
	cases := []struct {
		name string
		arr  func(*rand.Rand) arrow.Array
	}{
		{"int64_16k_narrow", func(r *rand.Rand) arrow.Array { return int64Array(r, 1<<14, 1<<40, 1<<16) }},
		{"int64_16k_30bit", func(r *rand.Rand) arrow.Array { return int64Array(r, 1<<14, 1<<40, 1<<30) }},
		{"int64_16k_full", func(r *rand.Rand) arrow.Array { return int64Array(r, 1<<14, 0, 0) }},
		{"int64_1M", func(r *rand.Rand) arrow.Array { return int64Array(r, 1<<20, 0, 0) }},
		{"float64_1M", func(r *rand.Rand) arrow.Array { return float64Array(r, 1<<20) }},
	}
	for _, tc := range cases {
		arr := tc.arr(rand.New(rand.NewPCG(3, 3)))
		defer arr.Release()
		b.Run(tc.name+"/reference", func(b *testing.B) { benchIndices(b, arr, compareIndices) })
		b.Run(tc.name+"/SortIndices", func(b *testing.B) { benchIndices(b, arr, SortIndices) })
	}
}

func benchIndices(b *testing.B, arr arrow.Array, sortFn func(arrow.Array) ([]int32, error)) {
	b.ReportAllocs()
	b.SetBytes(int64(arr.Len()) * 8)
	for b.Loop() {
		if _, err := sortFn(arr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(arr.Len())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// int64Array makes n int64 values in [base, base+span), or over all int64
// when span is 0.
func int64Array(r *rand.Rand, n int, base, span int64) arrow.Array {
	bld := array.NewInt64Builder(memory.DefaultAllocator)
	defer bld.Release()
	for range n {
		if span == 0 {
			bld.Append(int64(r.Uint64()))
		} else {
			bld.Append(base + r.Int64N(span))
		}
	}
	return bld.NewArray()
}

// float64Array makes n normally distributed float64 values.
func float64Array(r *rand.Rand, n int) arrow.Array {
	bld := array.NewFloat64Builder(memory.DefaultAllocator)
	defer bld.Release()
	for range n {
		bld.Append(r.NormFloat64() * 1e6)
	}
	return bld.NewArray()
}
