package splitaxes

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// cloneND is a deep copy of s (its slices are reused by NDSplitsReused).
func cloneND(s NDSplit) NDSplit {
	c := NDSplit{OldChunk: slices.Clone(s.OldChunk), NewChunk: slices.Clone(s.NewChunk),
		SplitIndex: slices.Clone(s.SplitIndex), Slices: slices.Clone(s.Slices), Offsets: slices.Clone(s.Offsets)}
	if s.Segs != nil {
		c.Segs = slices.Clone(s.Segs)
	}
	return c
}

// checkReused checks that NDSplitsReused yields what NDSplits does for
// every old chunk of p, Segs included.
func checkReused(t *testing.T, p *Plan) {
	t.Helper()
	for _, old := range gridIndices(p.OldGrid()) {
		seq, err := p.NDSplits(old)
		if err != nil {
			t.Fatal(err)
		}
		reused, err := p.NDSplitsReused(old)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Collect(seq)
		var got []NDSplit
		for s := range reused {
			got = append(got, cloneND(s))
		}
		if !sameNDs(got, want) {
			t.Fatalf("old %v: reused %v, want %v", old, got, want)
		}
		for i := range got {
			if (got[i].Segs == nil) != (want[i].Segs == nil) || !slices.EqualFunc(got[i].Segs, want[i].Segs, slices.Equal[[]Seg]) {
				t.Fatalf("old %v split %d: segs %v, want %v", old, i, got[i].Segs, want[i].Segs)
			}
		}
	}
}

func TestNDSplitsReusedMatchesNDSplits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		checkReused(t, randomPlan(t, r))
	}
	ra, err := NewDistAxis(CyclicSizes(6, 2, 1), &Dist{Type: Cyclic, Size: 6, BlockSize: 1}, []int64{6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := NewAxis([]int64{2, 2}, []int64{4})
	checkReused(t, FromAxes([]*Axis{ra, reg}))
	if _, err := FromAxes([]*Axis{ra, reg}).NDSplitsReused([]int{9, 0}); err == nil {
		t.Fatal("NDSplitsReused of an old chunk out of range: no error")
	}
}

// TestConsecutiveOld checks ConsecutiveOld against the pieces themselves:
// where it says yes, old chunk first+k is piece k, for every piece.
func TestConsecutiveOld(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 500 {
		total := r.Int64N(12)
		old, new := randomChunking(r, total, 5), randomChunking(r, total, 5)
		a, err := NewAxis(old, new)
		if err != nil {
			t.Fatal(err)
		}
		for j := range a.NumNew() {
			var olds []int
			for s := range a.Pieces(j) {
				olds = append(olds, s.OldChunk)
			}
			first, ok := a.ConsecutiveOld(j)
			want := len(olds) > 0
			for k := range olds {
				want = want && olds[k] == olds[0]+k
			}
			if ok != want || (ok && first != olds[0]) {
				t.Fatalf("old %v new %v chunk %d (pieces from %v): ConsecutiveOld = %d, %v", old, new, j, olds, first, ok)
			}
		}
	}
	ra, err := NewDistAxis(CyclicSizes(6, 2, 1), &Dist{Type: Cyclic, Size: 6, BlockSize: 1}, []int64{6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ra.ConsecutiveOld(0); ok {
		t.Fatal("a run axis's pieces said consecutive")
	}
}

func TestSplitIndexToReusesMemory(t *testing.T) {
	p, err := New([][]int64{{2, 2}, {3}}, [][]int64{{4}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]int, 2)
	idx, ok, err := p.SplitIndexTo(buf, []int{1, 0}, []int{0, 1})
	if err != nil || !ok || !slices.Equal(idx, []int{1, 0}) || &idx[0] != &buf[0] {
		t.Fatalf("SplitIndexTo = %v, %v, %v (in buf: %v)", idx, ok, err, err == nil && &idx[0] == &buf[0])
	}
}
