package rechunk

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// layout is a random array: shape, old and new chunking per axis, and which
// axes the plan declares unknown (their old and new chunkings are equal).
type layout struct {
	shape    []int64
	old, new [][]int64
	unknown  []bool
}

func randomLayout(r *rand.Rand, ndim int, withUnknown bool) layout {
	var l layout
	for range ndim {
		total := r.Int64N([]int64{1, 21, 11, 8, 6}[ndim])
		old := randomChunking(r, total)
		unknown := withUnknown && r.IntN(3) == 0
		new := old
		if !unknown {
			new = randomChunking(r, total)
		}
		l.shape, l.old, l.new = append(l.shape, total), append(l.old, old), append(l.new, new)
		l.unknown = append(l.unknown, unknown)
	}
	return l
}

// plan returns the plan of l, with Unknown sizes on its unknown axes.
func (l layout) plan() (*splitaxes.Plan, error) {
	old, new := slices.Clone(l.old), slices.Clone(l.new)
	for d, u := range l.unknown {
		if u {
			old[d] = slices.Repeat([]int64{U}, len(old[d]))
			new[d] = old[d]
		}
	}
	return splitaxes.New(old, new)
}

type placement struct {
	split []int
	piece Chunk
}

// cutAll cuts every ndsplit of every old chunk of full, grouped by new chunk.
func cutAll(t *testing.T, p *splitaxes.Plan, l layout, full Chunk) map[string][]placement {
	t.Helper()
	out := map[string][]placement{}
	for _, oi := range grid(p.OldGrid()) {
		origin, count := block(l.old, oi)
		old := Chunk{DType: full.DType, Shape: count, Data: refCut(full, origin, count)}
		seq, err := p.NDSplits(oi)
		if err != nil {
			t.Fatal(err)
		}
		for s := range seq {
			piece, err := Cut(old, s.Slices)
			if err != nil {
				t.Fatalf("old %v cut %v: %v", oi, s.Slices, err)
			}
			key := fmt.Sprint(s.NewChunk)
			out[key] = append(out[key], placement{s.SplitIndex, piece})
		}
	}
	return out
}

// assembleAll assembles every new chunk from its pieces in random order and
// compares it with the reference slicing of full.
func assembleAll(t *testing.T, r *rand.Rand, p *splitaxes.Plan, l layout, full Chunk, pieces map[string][]placement) {
	t.Helper()
	for _, ni := range grid(p.NewGrid()) {
		a, err := NewAssembler(p, ni, full.DType, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ps := pieces[fmt.Sprint(ni)]
		r.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		if len(ps) != a.Needed() {
			t.Fatalf("new %v: %d pieces cut, %d needed", ni, len(ps), a.Needed())
		}
		for _, pl := range ps {
			if err := a.Place(pl.split, pl.piece); err != nil {
				t.Fatalf("new %v: %v", ni, err)
			}
		}
		got, err := a.Chunk()
		origin, count := block(l.new, ni)
		if a.Needed() == 0 {
			count = noPieceShape(count, l.unknown) // nobody can tell unknown sizes
		}
		if want := refCut(full, origin, count); err != nil || !bytes.Equal(got.Data, want) || !slices.Equal(got.Shape, count) {
			t.Fatalf("new %v of %+v: got %v %x (%v), want %v %x", ni, l, got.Shape, got.Data, err, count, want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range allDTypes {
		for ndim := 1; ndim <= 4; ndim++ {
			for rep := range 12 {
				t.Run(fmt.Sprintf("%s/%dd/%d", s, ndim, rep), func(t *testing.T) {
					l := randomLayout(r, ndim, rep%3 == 2)
					p, err := l.plan()
					if err != nil {
						t.Fatal(err)
					}
					full := randomChunk(r, mustDType(s), l.shape)
					assembleAll(t, r, p, l, full, cutAll(t, p, l, full))
				})
			}
		}
	}
}

// noPieceShape is the documented shape of a chunk without pieces: 0 along
// unknown axes.
func noPieceShape(count []int64, unknown []bool) []int64 {
	out := slices.Clone(count)
	for d, u := range unknown {
		if u {
			out[d] = 0
		}
	}
	return out
}
