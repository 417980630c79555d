package rechunk

import (
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// benchLayout is a (10000, 10000) array rechunked from 10 x 100 chunks of
// (1000, 100) to 100 x 10 chunks of (100, 1000): 1000 -> 1000 chunks, every
// new chunk made of 10 pieces of (100, 100).
func benchLayout() (old, new [][]int64) {
	rep := func(n int, s int64) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = s
		}
		return out
	}
	return [][]int64{rep(10, 1000), rep(100, 100)}, [][]int64{rep(100, 100), rep(10, 1000)}
}

// BenchmarkRechunk10000 cuts every ndsplit of every old chunk (into one
// reused scratch buffer) and places it into the assembler of its new chunk.
// Each iteration also copies the same bytes with plain copy (outside the
// timer); both figures come from the same run. Destination buffers are
// reused across iterations on both sides, so neither pays the kernel's page
// faults for fresh memory (which dominate both on a virtual machine).
func BenchmarkRechunk10000(b *testing.B) {
	oldSizes, newSizes := benchLayout()
	plan, err := splitaxes.New(oldSizes, newSizes)
	if err != nil {
		b.Fatal(err)
	}
	dt := mustDType("<f8")
	olds := benchChunks(b, plan, dt)
	total := int64(10000 * 10000 * 8)
	b.SetBytes(total)
	b.ReportAllocs()
	var copyTime time.Duration
	pool := &bufPool{}
	dst := make([]byte, total)
	pool.release(benchRechunk(b, plan, dt, olds, pool)) // fault the buffers in
	plainCopy(dst, olds)
	for b.Loop() {
		pool.release(benchRechunk(b, plan, dt, olds, pool))
		b.StopTimer()
		copyTime += plainCopy(dst, olds)
		b.StartTimer()
	}
	rechunkMBs := float64(total) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	copyMBs := float64(total) * float64(b.N) / copyTime.Seconds() / 1e6
	b.ReportMetric(copyMBs, "copy-MB/s")
	b.ReportMetric(rechunkMBs/copyMBs, "rechunk/copy")
}

func benchChunks(b *testing.B, plan *splitaxes.Plan, dt DType) []Chunk {
	var olds []Chunk
	for _, oi := range grid(plan.OldGrid()) {
		c, err := NewChunk(dt, []int64{1000, 100})
		if err != nil {
			b.Fatal(err)
		}
		for i := range c.Data {
			c.Data[i] = byte(i + oi[1])
		}
		olds = append(olds, c)
	}
	return olds
}

// bufPool recycles the buffers of new chunks between iterations.
type bufPool struct{ free [][]byte }

func (p *bufPool) alloc(n int) []byte {
	if k := len(p.free) - 1; k >= 0 && len(p.free[k]) == n {
		buf := p.free[k]
		p.free = p.free[:k]
		return buf
	}
	return make([]byte, n)
}

func (p *bufPool) release(asm []*Assembler) {
	for _, a := range asm {
		c, _ := a.Chunk()
		p.free = append(p.free, c.Data)
	}
}

// benchRechunk does one whole rechunk: cut every ndsplit, place every piece.
func benchRechunk(b *testing.B, plan *splitaxes.Plan, dt DType, olds []Chunk, pool *bufPool) []*Assembler {
	asm := make([]*Assembler, 0, 1000)
	for _, ni := range grid(plan.NewGrid()) {
		a, err := NewAssembler(plan, ni, dt, Config{Alloc: pool.alloc})
		if err != nil {
			b.Fatal(err)
		}
		asm = append(asm, a)
	}
	var scratch []byte
	for k, oi := range grid(plan.OldGrid()) {
		seq, _ := plan.NDSplits(oi)
		for s := range seq {
			data, shape, err := AppendCut(scratch[:0], olds[k], s.Slices)
			if err != nil {
				b.Fatal(err)
			}
			scratch = data
			if err := asm[s.NewChunk[0]*10+s.NewChunk[1]].Place(s.SplitIndex, Chunk{DType: dt, Shape: shape, Data: data}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, a := range asm {
		if !a.Complete() {
			b.Fatal("incomplete")
		}
	}
	return asm
}

// plainCopy copies every old chunk into dst, one after the other, and
// returns how long it took.
func plainCopy(dst []byte, olds []Chunk) time.Duration {
	start := time.Now()
	off := 0
	for _, c := range olds {
		off += copy(dst[off:], c.Data)
	}
	return time.Since(start)
}
