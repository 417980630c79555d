package dap

import (
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// BenchmarkRedistribute plans, cuts and assembles in memory (no network)
// 1-3 d block-cyclic arrays over 1024+ processes into regular chunks
// (1024+ partitions): the engine's per-piece work without the cluster.
func BenchmarkRedistribute(b *testing.B) {
	cases := []struct {
		shape []int64
		grid  []int
		bs    []int64
		new   [][]int64
	}{
		{[]int64{1 << 20}, []int{1024}, []int64{64}, [][]int64{splitEven(1<<20, 1024)}},
		{[]int64{2048, 2048}, []int{32, 32}, []int64{16, 16}, [][]int64{splitEven(2048, 32), splitEven(2048, 32)}},
		{[]int64{128, 128, 128}, []int{16, 8, 8}, []int64{4, 4, 4}, [][]int64{splitEven(128, 8), splitEven(128, 8), splitEven(128, 16)}},
	}
	for _, tc := range cases {
		b.Run(fmt.Sprintf("%dd", len(tc.shape)), func(b *testing.B) {
			t := Target{ProcGrid: tc.grid}
			for _, bs := range tc.bs {
				t.Axes = append(t.Axes, TargetAxis{DistType: "c", BlockSize: bs})
			}
			in, err := t.Distribution(tc.shape)
			if err != nil {
				b.Fatal(err)
			}
			benchRedistribute(b, in, Regular(tc.new))
		})
	}
}

func splitEven(n int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		out[i] = n / int64(k)
	}
	return out
}

func benchRedistribute(b *testing.B, in, out Distribution) {
	dt, _ := rechunk.ParseDType("<f8")
	srcs := make([]rechunk.Chunk, in.NumProcs())
	for p := range srcs {
		shape := make([]int64, len(in.Grid))
		for a, r := range splitaxes.Unravel(p, in.Grid) {
			shape[a] = in.Chunks[a][r]
		}
		srcs[p], _ = rechunk.NewChunk(dt, shape)
	}
	total := int64(8)
	for _, n := range in.Shape {
		total *= n
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		sp, err := Spec("bench", "<f8", in, out)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := sp.Plan()
		if err != nil {
			b.Fatal(err)
		}
		moveAll(b, plan, srcs, in.Grid, out)
	}
	b.ReportMetric(float64(out.NumProcs()), "partitions")
}

// moveAll cuts every input into its pieces and places them.
func moveAll(b *testing.B, plan *splitaxes.Plan, srcs []rechunk.Chunk, grid []int, out Distribution) {
	dt := srcs[0].DType
	asms := make([]*rechunk.Assembler, out.NumProcs())
	for q := range asms {
		asms[q], _ = rechunk.NewAssembler(plan, splitaxes.Unravel(q, out.Grid), dt, rechunk.Config{})
	}
	var buf []byte
	for p, src := range srcs {
		splits, _ := plan.NDSplits(splitaxes.Unravel(p, grid))
		for nd := range splits {
			var err error
			if buf, err = rechunk.AppendGathered(buf[:0], src, nd.Slices, nd.Segs); err != nil {
				b.Fatal(err)
			}
			piece, _ := rechunk.DecodePiece(buf, dt)
			if err := asms[splitaxes.Ravel(nd.NewChunk, out.Grid)].PlaceOld(splitaxes.Unravel(p, grid), piece); err != nil {
				b.Fatal(err)
			}
		}
	}
}
