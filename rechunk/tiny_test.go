package rechunk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// randomSizes cuts total into at most n sizes, some of them zero.
func randomSizes(r *rand.Rand, total int64, n int) []int64 {
	var out []int64
	for total > 0 || len(out) == 0 {
		s := min(total, r.Int64N(4))
		if len(out) == n-1 {
			s = total
		}
		out, total = append(out, s), total-s
	}
	return out
}

// TestPieceWireRoundTrip cuts every piece of random plans as a sender does
// (AppendPiece of the reused ndsplits), decodes it as a receiver does
// (DecodePieceTo into one shape array) and places it by its old chunk
// (PlaceOld, whose split index is a subtraction where the pieces come from
// consecutive old chunks): every new chunk must equal the array's slice, and
// PlacedOld must name exactly the old chunks placed.
func TestPieceWireRoundTrip(t *testing.T) {
	dt := mustDType("<i2")
	randomPlans(rand.New(rand.NewPCG(9, 10)), func(old, new [][]int64) { checkWireRoundTrip(t, old, new, dt) })
}

// randomPlans calls check with 200 random chunkings of 1 to 3 axes.
func randomPlans(r *rand.Rand, check func(old, new [][]int64)) {
	for range 200 {
		ndim := 1 + r.IntN(3)
		old, new := make([][]int64, ndim), make([][]int64, ndim)
		for d := range ndim {
			total := 1 + r.Int64N(9)
			old[d], new[d] = randomSizes(r, total, 5), randomSizes(r, total, 5)
		}
		check(old, new)
	}
}

func checkWireRoundTrip(t *testing.T, oldSizes, newSizes [][]int64, dt DType) {
	t.Helper()
	placed := map[string][]string{}
	shapes := make([]int64, 0, 64)
	plan, asm := placeEvery(t, oldSizes, newSizes, dt, func(a *Assembler, oi []int, b []byte) {
		piece, err := DecodePieceTo(shapes[:0], b, dt)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.PlaceOld(oi, piece); err != nil {
			t.Fatalf("old %v -> new %v: %v", oi, a.index, err)
		}
		placed[fmt.Sprint(a.index)] = append(placed[fmt.Sprint(a.index)], fmt.Sprint(oi))
	})
	for key, a := range asm {
		var got []string
		for o := range a.PlacedOld() {
			got = append(got, fmt.Sprint(o))
		}
		want := slices.Clone(placed[key])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("old %v new %v chunk %s: PlacedOld %v, placed %v", oldSizes, newSizes, key, got, want)
		}
	}
	checkAssembled(t, plan, asm, newSizes, dt)
}

// placeEvery cuts every piece of the plan from oldSizes to newSizes as a
// sender does (AppendPiece of the reused ndsplits, each old chunk filled
// by indexChunk) and hands it, in its wire form, to place with its new
// chunk's assembler (made with the first piece). It returns the plan and
// the assemblers by new chunk (fmt.Sprint of its index).
func placeEvery(t *testing.T, oldSizes, newSizes [][]int64, dt DType, place func(a *Assembler, oi []int, b []byte)) (*splitaxes.Plan, map[string]*Assembler) {
	t.Helper()
	plan, err := splitaxes.New(oldSizes, newSizes)
	if err != nil {
		t.Fatal(err)
	}
	asm := map[string]*Assembler{}
	for _, oi := range grid(plan.OldGrid()) {
		src := indexChunk(t, dt, oldSizes, oi)
		seq, err := plan.NDSplitsReused(oi)
		if err != nil {
			t.Fatal(err)
		}
		for s := range seq {
			b, err := AppendPiece(nil, src, s.Slices)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprint(s.NewChunk)
			if asm[key] == nil {
				if asm[key], err = NewAssembler(plan, s.NewChunk, dt, Config{}); err != nil {
					t.Fatal(err)
				}
			}
			place(asm[key], oi, b)
		}
	}
	return plan, asm
}

// checkAssembled checks that every new chunk assembled equals the array's
// slice.
func checkAssembled(t *testing.T, plan *splitaxes.Plan, asm map[string]*Assembler, newSizes [][]int64, dt DType) {
	t.Helper()
	for _, ni := range grid(plan.NewGrid()) {
		a := asm[fmt.Sprint(ni)]
		if a == nil {
			continue // an empty new chunk: no piece
		}
		c, err := a.Chunk()
		if err != nil {
			t.Fatal(err)
		}
		if want := indexChunk(t, dt, newSizes, ni); !slices.Equal(c.Data, want.Data) {
			t.Fatalf("new %v chunk %v: %v, want %v", newSizes, ni, c.Data, want.Data)
		}
	}
}

// indexChunk is chunk idx of the chunking sizes of an array whose element
// at each global C-order position holds that position (as a 2-byte int).
func indexChunk(t *testing.T, dt DType, sizes [][]int64, idx []int) Chunk {
	t.Helper()
	shape, start, total := make([]int64, len(idx)), make([]int64, len(idx)), make([]int64, len(idx))
	for d, i := range idx {
		for k, s := range sizes[d] {
			total[d] += s
			if k < i {
				start[d] += s
			}
		}
		shape[d] = sizes[d][i]
	}
	c, err := NewChunk(dt, shape)
	if err != nil {
		t.Fatal(err)
	}
	for e := range len(c.Data) / 2 {
		g, rest := int64(0), int64(e)
		for d := len(shape) - 1; d >= 0; d-- {
			local := rest % shape[d]
			rest /= shape[d]
			stride := int64(1)
			for k := d + 1; k < len(shape); k++ {
				stride *= total[k]
			}
			g += (start[d] + local) * stride
		}
		c.Data[2*e], c.Data[2*e+1] = byte(g), byte(g>>8)
	}
	return c
}

// BenchmarkTinyPieces rechunks a (1000, 1000) f8 array from rows to columns
// ((1, 1000) -> (1000, 1) chunks): a million pieces of one element, the
// shape of bench scale's 10,000 x 10,000 array case. Each piece is cut with
// its header as a sender does and placed from its wire form by its old
// chunk as a receiver does; ns/piece is the whole round.
func BenchmarkTinyPieces(b *testing.B) {
	const n = 1000
	shape := []int64{n, n}
	plan, err := splitaxes.New([][]int64{slices.Repeat([]int64{1}, n), {n}}, [][]int64{{n}, slices.Repeat([]int64{1}, n)})
	if err != nil {
		b.Fatal(err)
	}
	dt := mustDType("<f8")
	src, err := NewChunk(dt, []int64{1, shape[1]})
	if err != nil {
		b.Fatal(err)
	}
	asm := make([]*Assembler, n)
	bufs := make([][]byte, n)
	for j := range bufs {
		bufs[j] = make([]byte, n*8)
	}
	b.SetBytes(n * n * 8)
	b.ReportAllocs()
	var wire []byte
	for b.Loop() {
		for j := range asm {
			buf := bufs[j]
			if asm[j], err = NewAssembler(plan, []int{0, j}, dt, Config{Alloc: func(int) []byte { return buf }}); err != nil {
				b.Fatal(err)
			}
		}
		for i := range n {
			old := []int{i, 0}
			seq, _ := plan.NDSplitsReused(old)
			for s := range seq {
				if wire, err = AppendPiece(wire[:0], src, s.Slices); err != nil {
					b.Fatal(err)
				}
				if _, err := asm[s.NewChunk[1]].PlaceOldWire(old, wire); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n*n), "ns/piece")
}
