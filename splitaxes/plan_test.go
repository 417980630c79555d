package splitaxes

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// gridIndices returns every index of a grid, last axis fastest.
func gridIndices(grid []int) [][]int {
	out := [][]int{{}}
	for _, n := range grid {
		var next [][]int
		for _, idx := range out {
			for k := range n {
				next = append(next, append(slices.Clone(idx), k))
			}
		}
		out = next
	}
	return out
}

// refNDSplits is the cartesian product of per-axis splits, built eagerly.
func refNDSplits(p *Plan, old []int) []NDSplit {
	out := []NDSplit{{}}
	for d := range p.NDim() {
		var next []NDSplit
		for _, s := range out {
			for sp := range p.Axis(d).Splits(old[d]) {
				next = append(next, NDSplit{
					OldChunk:   append(slices.Clone(s.OldChunk), sp.OldChunk),
					NewChunk:   append(slices.Clone(s.NewChunk), sp.NewChunk),
					SplitIndex: append(slices.Clone(s.SplitIndex), sp.SplitIndex),
					Slices:     append(slices.Clone(s.Slices), Slice{sp.Start, sp.Stop}),
					Offsets:    append(slices.Clone(s.Offsets), sp.Offset),
				})
			}
		}
		out = next
	}
	return out
}

func sameND(a, b NDSplit) bool {
	return slices.Equal(a.OldChunk, b.OldChunk) && slices.Equal(a.NewChunk, b.NewChunk) &&
		slices.Equal(a.SplitIndex, b.SplitIndex) && slices.Equal(a.Slices, b.Slices) &&
		slices.Equal(a.Offsets, b.Offsets)
}

func sameNDs(a, b []NDSplit) bool {
	return slices.EqualFunc(a, b, sameND)
}

func randomPlan(t *testing.T, r *rand.Rand) *Plan {
	t.Helper()
	ndim := r.IntN(4)
	old, new := make([][]int64, ndim), make([][]int64, ndim)
	for d := range ndim {
		total := r.Int64N(12)
		old[d], new[d] = randomChunking(r, total, 5), randomChunking(r, total, 5)
	}
	p, err := New(old, new)
	if err != nil {
		t.Fatalf("New(%v, %v): %v", old, new, err)
	}
	return p
}

func TestNDSplitsIsProduct(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		p := randomPlan(t, r)
		byNew := map[string][]NDSplit{}
		for _, old := range gridIndices(p.OldGrid()) {
			seq, err := p.NDSplits(old)
			if err != nil {
				t.Fatal(err)
			}
			got, want := slices.Collect(seq), refNDSplits(p, old)
			if n, _ := p.NumSplits(old); !sameNDs(got, want) || n != len(got) {
				t.Fatalf("old %v: got %v (count %d), want %v", old, got, n, want)
			}
			for _, s := range got {
				key := fmt.Sprint(s.NewChunk)
				byNew[key] = append(byNew[key], s)
			}
		}
		checkNDInverse(t, p, byNew)
	}
}

// checkNDInverse checks that Pieces(new) holds exactly the ndsplits of all
// old chunks that go to new, in split-index order.
func checkNDInverse(t *testing.T, p *Plan, byNew map[string][]NDSplit) {
	t.Helper()
	for _, nw := range gridIndices(p.NewGrid()) {
		want := byNew[fmt.Sprint(nw)]
		slices.SortFunc(want, func(a, b NDSplit) int { return slices.Compare(a.SplitIndex, b.SplitIndex) })
		seq, err := p.Pieces(nw)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Collect(seq)
		if n, _ := p.NumPieces(nw); !sameNDs(got, want) || n != len(got) {
			t.Fatalf("new %v: got %v (count %d), want %v", nw, got, n, want)
		}
		for _, s := range got {
			idx, ok, err := p.SplitIndex(s.OldChunk, nw)
			if err != nil || !ok || !slices.Equal(idx, s.SplitIndex) {
				t.Fatalf("SplitIndex(%v, %v) = %v %v %v, want %v", s.OldChunk, nw, idx, ok, err, s.SplitIndex)
			}
		}
	}
}

func TestPlanIndexErrors(t *testing.T) {
	p, err := New([][]int64{{2, 2}, {3}}, [][]int64{{4}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"ndsplits short index", func() error { _, err := p.NDSplits([]int{0}); return err }, ErrNDim},
		{"ndsplits out of range", func() error { _, err := p.NDSplits([]int{2, 0}); return err }, ErrIndex},
		{"ndsplits negative", func() error { _, err := p.NDSplits([]int{0, -1}); return err }, ErrIndex},
		{"pieces out of range", func() error { _, err := p.Pieces([]int{0, 2}); return err }, ErrIndex},
		{"num pieces", func() error { _, err := p.NumPieces([]int{1, 0}); return err }, ErrIndex},
		{"num splits", func() error { _, err := p.NumSplits([]int{0, 0, 0}); return err }, ErrNDim},
		{"split index old", func() error { _, _, err := p.SplitIndex([]int{3, 0}, []int{0, 0}); return err }, ErrIndex},
		{"split index new", func() error { _, _, err := p.SplitIndex([]int{0, 0}, []int{0, 5}); return err }, ErrIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestPlanSplitIndexNotContributing(t *testing.T) {
	p, err := New([][]int64{{2, 2}}, [][]int64{{1, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if idx, ok, err := p.SplitIndex([]int{1}, []int{0}); ok || err != nil {
		t.Fatalf("got %v %v %v, want not ok", idx, ok, err)
	}
}

func TestZeroDimPlan(t *testing.T) {
	p, err := New(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := p.NDSplits(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(seq); len(got) != 1 || len(got[0].Slices) != 0 {
		t.Fatalf("0-d: got %v, want one empty ndsplit", got)
	}
	if n, err := p.NumPieces([]int{}); n != 1 || err != nil {
		t.Fatalf("0-d NumPieces = %d, %v", n, err)
	}
}

func TestNDSplitsEarlyStopAndOwnership(t *testing.T) {
	p, err := New([][]int64{{4}, {4}}, [][]int64{{2, 2}, {1, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := p.NDSplits([]int{0, 0})
	var kept []NDSplit
	for s := range seq {
		if kept = append(kept, s); len(kept) == 4 {
			break
		}
	}
	want := [][]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}}
	for k, s := range kept {
		if !slices.Equal(s.NewChunk, want[k]) {
			t.Fatalf("ndsplit %d goes to %v, want %v (yielded values must not be reused)", k, s.NewChunk, want[k])
		}
	}
}

func TestUnknownAxisND(t *testing.T) {
	p, err := New([][]int64{{U, U}, {4}}, [][]int64{{U, U}, {2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := p.Pieces([]int{1, 1})
	got := slices.Collect(seq)
	want := []NDSplit{{OldChunk: []int{1, 0}, NewChunk: []int{1, 1}, SplitIndex: []int{0, 0},
		Slices: []Slice{{0, U}, {2, 4}}, Offsets: []int64{0, 0}}}
	if !sameNDs(got, want) || !got[0].Slices[0].OpenEnded() || got[0].Slices[1].OpenEnded() {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
