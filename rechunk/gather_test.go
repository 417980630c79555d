package rechunk

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// distAxis is one axis of a distributed test array: both sides and the
// per-position global index of every chunk (-1 for padding on the old side).
type distAxis struct {
	total              int64
	oldSizes, newSizes []int64
	oldG, newG         [][]int64
	axis               *splitaxes.Axis
}

// randomSide returns chunk sizes and a distribution of an axis.
func randomSide(r *rand.Rand, total int64) ([]int64, *splitaxes.Dist) {
	procs := 1 + r.IntN(3)
	switch r.IntN(4) {
	case 0:
		bs := 1 + r.Int64N(3)
		return splitaxes.CyclicSizes(total, procs, bs), &splitaxes.Dist{Type: splitaxes.Cyclic, BlockSize: bs}
	case 1:
		d := &splitaxes.Dist{Type: splitaxes.Unstructured, Indices: make([][]int64, procs)}
		for _, g := range r.Perm(int(total)) {
			c := r.IntN(procs)
			d.Indices[c] = append(d.Indices[c], int64(g))
		}
		sizes := make([]int64, procs)
		for c := range sizes {
			sizes[c] = int64(len(d.Indices[c]))
		}
		return sizes, d
	case 2:
		return paddedBlock(r, total, procs)
	}
	return randomChunking(r, total), nil
}

// paddedBlock returns a block distribution with padding of width 1 where
// the neighbour owns anything.
func paddedBlock(r *rand.Rand, total int64, procs int) ([]int64, *splitaxes.Dist) {
	owned := make([]int64, procs)
	for range total {
		owned[r.IntN(procs)]++
	}
	d := &splitaxes.Dist{Type: splitaxes.Block, Starts: make([]int64, procs), Pad: make([][2]int64, procs)}
	sizes := make([]int64, procs)
	at := int64(0)
	for c, n := range owned {
		if c > 0 {
			d.Pad[c][0] = min(1, owned[c-1])
		}
		if c < procs-1 {
			d.Pad[c][1] = min(1, owned[c+1])
		}
		d.Starts[c], sizes[c] = at-d.Pad[c][0], n+d.Pad[c][0]+d.Pad[c][1]
		at += n
	}
	return sizes, d
}

func randomDistAxis(t *testing.T, r *rand.Rand) distAxis {
	a := distAxis{total: r.Int64N(9)}
	os, od := randomSide(r, a.total)
	ns, nd := randomSide(r, a.total)
	old, err := splitaxes.SideOf(od, a.total, os, true)
	if err != nil {
		t.Fatal(err)
	}
	new, err := splitaxes.SideOf(nd, a.total, ns, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.axis, err = splitaxes.NewRunAxis(a.total, old, new); err != nil {
		t.Fatal(err)
	}
	a.oldSizes, a.newSizes, a.oldG, a.newG = os, ns, positions(old), positions(new)
	return a
}

// positions maps each chunk position to its global index (-1: none).
func positions(s splitaxes.Side) [][]int64 {
	out := make([][]int64, len(s.Sizes))
	for c, n := range s.Sizes {
		out[c] = make([]int64, n)
		for i := range out[c] {
			out[c][i] = -1
		}
	}
	for _, r := range s.Runs {
		for k := range r.Len {
			out[r.Chunk][r.Local+k] = r.Global + k
		}
	}
	return out
}

// fillChunk makes the chunk idx of one side: each element holds its global
// C-order index as a little-endian uint32, padding 0xffffffff.
func fillChunk(axes []distAxis, idx []int, newSide bool) Chunk {
	dt, _ := ParseDType("<u4")
	shape := make([]int64, len(axes))
	gs := make([][]int64, len(axes))
	for d, a := range axes {
		if newSide {
			gs[d] = a.newG[idx[d]]
		} else {
			gs[d] = a.oldG[idx[d]]
		}
		shape[d] = int64(len(gs[d]))
	}
	c, _ := NewChunk(dt, shape)
	i := 0
	forEachIndex(shape, func(pos []int64) {
		v := int64(0)
		for d := range pos {
			g := gs[d][pos[d]]
			if g < 0 || v < 0 {
				v = -1
				continue
			}
			v = v*axes[d].total + g
		}
		binary.LittleEndian.PutUint32(c.Data[4*i:], uint32(v))
		i++
	})
	return c
}

// TestGatheredRoundTrip cuts every old chunk of random 1-3 d distributed
// arrays into its gathered pieces, assembles every new chunk and checks
// every element against its global index.
func TestGatheredRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for c := range 300 {
		axes := make([]distAxis, 1+r.IntN(3))
		plain := make([]*splitaxes.Axis, len(axes))
		for d := range axes {
			axes[d] = randomDistAxis(t, r)
			plain[d] = axes[d].axis
		}
		roundTrip(t, c, axes, splitaxes.FromAxes(plain))
	}
}

func roundTrip(t *testing.T, c int, axes []distAxis, plan *splitaxes.Plan) {
	dt, _ := ParseDType("<u4")
	asms := map[int]*Assembler{}
	for _, ni := range grid(plan.NewGrid()) {
		asms[splitaxes.Ravel(ni, plan.NewGrid())], _ = NewAssembler(plan, ni, dt, Config{})
	}
	for _, oi := range grid(plan.OldGrid()) {
		src := fillChunk(axes, oi, false)
		splits, _ := plan.NDSplits(oi)
		for nd := range splits {
			b, err := AppendGathered(nil, src, nd.Slices, nd.Segs)
			if err != nil {
				t.Fatalf("case %d old %v: %v", c, oi, err)
			}
			piece, _ := DecodePiece(b, dt)
			asm := asms[splitaxes.Ravel(nd.NewChunk, plan.NewGrid())]
			for range 2 { // the second time only checks the bytes
				if _, err := asm.PlaceOldOnce(oi, piece); err != nil {
					t.Fatalf("case %d old %v new %v: %v", c, oi, nd.NewChunk, err)
				}
			}
		}
	}
	for _, ni := range grid(plan.NewGrid()) {
		got, err := asms[splitaxes.Ravel(ni, plan.NewGrid())].Chunk()
		if err != nil {
			t.Fatalf("case %d new %v: %v", c, ni, err)
		}
		if want := fillChunk(axes, ni, true); string(got.Data) != string(want.Data) {
			t.Fatalf("case %d new chunk %v differs", c, ni)
		}
	}
}
