package splitaxes

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomDist returns a random distribution of an axis of length total: its
// chunk sizes and *Dist (nil for consecutive chunks). padded allows Block
// padding.
func randomDist(rng *rand.Rand, total int64, padded bool) ([]int64, *Dist) {
	procs := 1 + rng.IntN(5)
	switch rng.IntN(4) {
	case 0:
		return randomSizes(rng, total, procs), nil
	case 1:
		bs := 1 + rng.Int64N(4)
		return CyclicSizes(total, procs, bs), &Dist{Type: Cyclic, BlockSize: bs}
	case 2:
		return randomUnstructured(rng, total, procs)
	}
	return randomBlock(rng, total, procs, padded)
}

func randomSizes(rng *rand.Rand, total int64, procs int) []int64 {
	sizes := make([]int64, procs)
	for t := int64(0); t < total; t++ {
		sizes[rng.IntN(procs)]++
	}
	return sizes
}

func randomUnstructured(rng *rand.Rand, total int64, procs int) ([]int64, *Dist) {
	d := &Dist{Type: Unstructured, Indices: make([][]int64, procs)}
	for _, g := range rng.Perm(int(total)) {
		c := rng.IntN(procs)
		d.Indices[c] = append(d.Indices[c], int64(g))
	}
	sizes := make([]int64, procs)
	for c := range sizes {
		if rng.IntN(2) == 0 {
			slices.Sort(d.Indices[c]) // runs of consecutive indices
		}
		sizes[c] = int64(len(d.Indices[c]))
	}
	return sizes, d
}

// randomBlock returns consecutive owned ranges, each buffer widened by
// padding that copies up to its neighbours' whole owned range.
func randomBlock(rng *rand.Rand, total int64, procs int, padded bool) ([]int64, *Dist) {
	owned := randomSizes(rng, total, procs)
	d := &Dist{Type: Block, Starts: make([]int64, procs), Pad: make([][2]int64, procs)}
	sizes := make([]int64, procs)
	at := int64(0)
	for c, n := range owned {
		if padded && c > 0 {
			d.Pad[c][0] = rng.Int64N(owned[c-1] + 1)
		}
		if padded && c < procs-1 {
			d.Pad[c][1] = rng.Int64N(owned[c+1] + 1)
		}
		d.Starts[c] = at - d.Pad[c][0]
		sizes[c] = n + d.Pad[c][0] + d.Pad[c][1]
		at += n
	}
	return sizes, d
}

// globals maps every (chunk, local) of one side to its global index (-1
// for positions no run names), element by element.
func globals(t *testing.T, s Side) [][]int64 {
	out := make([][]int64, len(s.Sizes))
	for c, n := range s.Sizes {
		out[c] = slices.Repeat([]int64{-1}, int(n))
	}
	for _, r := range s.Runs {
		for k := range r.Len {
			out[r.Chunk][r.Local+k] = r.Global + k
		}
	}
	return out
}

// checkRunAxis checks a run axis against a brute-force per-element mapping:
// every position of every new chunk is filled exactly once, from the old
// position that holds the same global index.
func checkRunAxis(t *testing.T, a *Axis, old, new Side) {
	t.Helper()
	og, ng := globals(t, old), globals(t, new)
	for j := range a.NumNew() {
		filled := make([]int, len(ng[j]))
		for s := range a.Pieces(j) {
			if s.NewChunk != j || s.Len() != segLen(s.Segs) {
				t.Fatalf("new chunk %d: split %+v", j, s)
			}
			if k, ok := a.SplitIndex(s.OldChunk, j); !ok || k != s.SplitIndex {
				t.Fatalf("new chunk %d old %d: split index %d, %v, want %d", j, s.OldChunk, k, ok, s.SplitIndex)
			}
			for _, sg := range s.Segs {
				for k := range sg.Len {
					filled[sg.New+k]++
					if got, want := og[s.OldChunk][sg.Old+k], ng[j][sg.New+k]; got != want || got < 0 {
						t.Fatalf("new chunk %d position %d: global %d from old chunk %d, want %d", j, sg.New+k, got, s.OldChunk, want)
					}
				}
			}
		}
		for l, n := range filled {
			if n != 1 {
				t.Fatalf("new chunk %d position %d filled %d times", j, l, n)
			}
		}
	}
	checkOldView(t, a)
}

func segLen(ss []Seg) int64 {
	n := int64(0)
	for _, s := range ss {
		n += s.Len
	}
	return n
}

// checkOldView checks that Splits and Pieces list the same pairs.
func checkOldView(t *testing.T, a *Axis) {
	t.Helper()
	var byOld, byNew []string
	for i := range a.NumOld() {
		for s := range a.Splits(i) {
			byOld = append(byOld, fmt.Sprint(s))
		}
	}
	for j := range a.NumNew() {
		for s := range a.Pieces(j) {
			byNew = append(byNew, fmt.Sprint(s))
		}
	}
	slices.Sort(byOld)
	slices.Sort(byNew)
	if !slices.Equal(byOld, byNew) {
		t.Fatalf("old view %v\nnew view %v", byOld, byNew)
	}
}

func TestRunAxisProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	for i := range 2000 {
		total := rng.Int64N(40)
		os, od := randomDist(rng, total, true)
		ns, nd := randomDist(rng, total, true)
		old, err := SideOf(od, total, os, true)
		if err != nil {
			t.Fatalf("case %d old: %v", i, err)
		}
		new, err := SideOf(nd, total, ns, false)
		if err != nil {
			t.Fatalf("case %d new: %v", i, err)
		}
		a, err := NewRunAxis(total, old, new)
		if err != nil {
			t.Fatalf("case %d: total %d old %v %+v new %v %+v: %v", i, total, os, od, ns, nd, err)
		}
		checkRunAxis(t, a, old, new)
	}
}

func TestRunAxisCyclicToBlock(t *testing.T) {
	// 10 indices, block size 2 over 2 procs: proc 0 holds 0,1,4,5,8,9.
	old, _ := SideOf(&Dist{Type: Cyclic, BlockSize: 2}, 10, CyclicSizes(10, 2, 2), true)
	new, _ := SideOf(nil, 10, []int64{5, 5}, false)
	a, err := NewRunAxis(10, old, new)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Collect(a.Splits(0))
	want := []Split{
		{OldChunk: 0, NewChunk: 0, SplitIndex: 0, Stop: 3, Segs: []Seg{{0, 0, 2}, {2, 4, 1}}},
		{OldChunk: 0, NewChunk: 1, SplitIndex: 0, Stop: 3, Segs: []Seg{{3, 0, 1}, {4, 3, 2}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("splits of proc 0:\n got %+v\nwant %+v", got, want)
	}
	if n := a.NumPieces(1); n != 2 {
		t.Fatalf("new chunk 1 has %d pieces, want 2", n)
	}
}

func TestRunAxisErrors(t *testing.T) {
	tests := []struct {
		name     string
		total    int64
		old, new Side
		want     error
	}{
		{"old overlap", 4, Side{[]int64{3, 2}, []Run{{0, 0, 0, 3}, {1, 2, 0, 2}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, ErrOverlap},
		{"old gap", 4, Side{[]int64{2, 1}, []Run{{0, 0, 0, 2}, {1, 3, 0, 1}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, ErrGap},
		{"new gap", 4, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, Side{[]int64{2, 1}, []Run{{0, 0, 0, 2}, {1, 3, 0, 1}}}, ErrGap},
		{"new chunk not filled", 4, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, Side{[]int64{5}, []Run{{0, 0, 0, 4}}}, ErrGap},
		{"new position twice", 4, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}, {0, 1, 1, 1}}}, ErrOverlap},
		{"past the axis", 4, Side{[]int64{5}, []Run{{0, 0, 0, 5}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, ErrBadRun},
		{"past the chunk", 4, Side{[]int64{3}, []Run{{0, 0, 0, 4}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, ErrBadRun},
		{"bad chunk", 4, Side{[]int64{4}, []Run{{1, 0, 0, 4}}}, Side{[]int64{4}, []Run{{0, 0, 0, 4}}}, ErrBadRun},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRunAxis(tc.total, tc.old, tc.new); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestUnstructuredDuplicate(t *testing.T) {
	if _, err := UnstructuredRuns([][]int64{{3, 1, 3}}); !errors.Is(err, ErrOverlap) {
		t.Fatalf("got %v, want ErrOverlap", err)
	}
}

func TestCyclicSizes(t *testing.T) {
	for total := int64(0); total < 30; total++ {
		for procs := 1; procs < 5; procs++ {
			for bs := int64(1); bs < 5; bs++ {
				rs, _ := CyclicRuns(total, procs, bs)
				if err := checkCounts(rs, CyclicSizes(total, procs, bs)); err != nil {
					t.Fatalf("total %d procs %d bs %d: %v", total, procs, bs, err)
				}
			}
		}
	}
}

// TestPlanRunNDSplits checks that a plan mixing a run axis and a regular
// axis yields Segs only along the run axis.
func TestPlanRunNDSplits(t *testing.T) {
	ra, err := NewDistAxis(CyclicSizes(6, 2, 1), &Dist{Type: Cyclic, Size: 6, BlockSize: 1}, []int64{6}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := NewAxis([]int64{2, 2}, []int64{4})
	p := FromAxes([]*Axis{ra, reg})
	splits, err := p.NDSplits([]int{1, 0})
	if err != nil {
		t.Fatal(err)
	}
	for s := range splits {
		if s.Segs == nil || s.Segs[1] != nil || len(s.Segs[0]) != 3 {
			t.Fatalf("segs %v", s.Segs)
		}
	}
}
