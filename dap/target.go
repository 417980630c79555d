package dap

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// TargetAxis is how a target distribution spreads one axis.
type TargetAxis struct {
	// DistType is "b" (even blocks) or "c" (block-cyclic).
	DistType string `json:"dist_type"`
	// BlockSize is the block size of "c" (default 1).
	BlockSize int64 `json:"block_size,omitempty"`
	// Padding is, for "b", the communication padding width between
	// neighbours (capped by the neighbours' owned counts); it is filled
	// from the neighbours' owned data.
	Padding int64 `json:"padding,omitempty"`
	// Periodic makes a "b" axis periodic: the first Padding indices (on
	// the first rank) and the last Padding indices (on the last rank) are
	// ghost zones, filled with copies of the far end of the period (the
	// indices between them), wrapping around.
	Periodic bool `json:"periodic,omitempty"`
}

// Target is an output distribution: a process grid and each axis's
// distribution. Output partition p of the shuffle is process p's local
// array.
type Target struct {
	ProcGrid []int        `json:"proc_grid"`
	Axes     []TargetAxis `json:"axes"`
}

// Distribution returns the target's layout of an array of the given shape.
// The error wraps ErrGrid or ErrBadValue.
func (t Target) Distribution(shape []int64) (Distribution, error) {
	if len(t.ProcGrid) != len(shape) || len(t.Axes) != len(shape) {
		return Distribution{}, keyErr(-1, -1, "proc_grid", ErrGrid, "%d grid sizes and %d axes for shape %v", len(t.ProcGrid), len(t.Axes), shape)
	}
	d := Distribution{Shape: shape, Grid: t.ProcGrid, Chunks: make([][]int64, len(shape)), Dists: make([]*splitaxes.Dist, len(shape))}
	for a, ax := range t.Axes {
		var err error
		if d.Chunks[a], d.Dists[a], err = ax.layout(shape[a], t.ProcGrid[a], a); err != nil {
			return Distribution{}, err
		}
	}
	return d, nil
}

// layout returns the chunk sizes and distribution of one target axis.
func (ax TargetAxis) layout(size int64, procs, a int) ([]int64, *splitaxes.Dist, error) {
	if procs < 1 {
		return nil, nil, keyErr(-1, a, "proc_grid", ErrBadValue, "%d processes", procs)
	}
	switch ax.DistType {
	case "b":
		if ax.Periodic {
			return periodicBlocks(size, procs, ax.Padding, a)
		}
		return evenBlocks(size, procs, ax.Padding, a)
	case "c":
		bs := max(ax.BlockSize, 1)
		return splitaxes.CyclicSizes(size, procs, bs), &splitaxes.Dist{Type: splitaxes.Cyclic, Size: size, BlockSize: bs}, nil
	}
	return nil, nil, keyErr(-1, a, "dist_type", ErrBadValue, "%q: a target is \"b\" or \"c\"", ax.DistType)
}

// evenBlocks splits size into procs blocks (the first size%procs one
// longer), each widened by the communication padding w on inner edges.
func evenBlocks(size int64, procs int, w int64, a int) ([]int64, *splitaxes.Dist, error) {
	if w < 0 {
		return nil, nil, keyErr(-1, a, "padding", ErrBadValue, "%d < 0", w)
	}
	own := make([]int64, procs)
	for r := range own {
		own[r] = size / int64(procs)
		if int64(r) < size%int64(procs) {
			own[r]++
		}
	}
	if w == 0 {
		return own, nil, nil
	}
	dist := &splitaxes.Dist{Type: splitaxes.Block, Size: size, Starts: make([]int64, procs), Pad: make([][2]int64, procs)}
	sizes, at, padded := make([]int64, procs), int64(0), false
	for r := range own {
		if r > 0 {
			dist.Pad[r][0] = min(w, own[r-1], own[r])
		}
		if r < procs-1 {
			dist.Pad[r][1] = min(w, own[r], own[r+1])
		}
		dist.Starts[r], sizes[r] = at-dist.Pad[r][0], own[r]+dist.Pad[r][0]+dist.Pad[r][1]
		at += own[r]
		padded = padded || dist.Pad[r] != [2]int64{}
	}
	if !padded {
		return own, nil, nil
	}
	return sizes, dist, nil
}

// periodicBlocks is evenBlocks on a periodic axis: the first rank's
// padding before and the last rank's after are ghost zones of width w
// (capped by those ranks' blocks), inside the axis; communication padding
// between ranks is capped by the neighbours' indices that are no ghost.
func periodicBlocks(size int64, procs int, w int64, a int) ([]int64, *splitaxes.Dist, error) {
	if w < 0 {
		return nil, nil, keyErr(-1, a, "padding", ErrBadValue, "%d < 0", w)
	}
	own, _, _ := evenBlocks(size, procs, 0, a)
	last := procs - 1
	real := slices.Clone(own) // owned, less the ghosts
	g0 := min(w, real[0])
	real[0] -= g0
	g1 := min(w, real[last])
	real[last] -= g1
	if size-g0-g1 < max(g0, g1) {
		return nil, nil, keyErr(-1, a, "padding", ErrPadding, "periodic ghost zones [%d %d] longer than the period of %d indices", g0, g1, size-g0-g1)
	}
	dist := &splitaxes.Dist{Type: splitaxes.Block, Size: size, Starts: make([]int64, procs), Pad: make([][2]int64, procs), Periodic: true}
	dist.Pad[0][0], dist.Pad[last][1] = g0, g1
	sizes, at := make([]int64, procs), int64(0)
	for r := range own {
		if r < last {
			c := min(w, real[r], real[r+1])
			dist.Pad[r][1], dist.Pad[r+1][0] = c, c
		}
	}
	for r := range own {
		comm := dist.Pad[r][0]
		if r == 0 {
			comm = 0
		}
		dist.Starts[r] = at - comm
		sizes[r] = own[r] + comm
		if r < last {
			sizes[r] += dist.Pad[r][1]
		}
		at += own[r]
	}
	return sizes, dist, nil
}

// Regular returns the Distribution of a regular chunk grid: one process
// per chunk, block on every axis.
func Regular(chunks [][]int64) Distribution {
	d := Distribution{Shape: make([]int64, len(chunks)), Grid: make([]int, len(chunks)), Chunks: chunks, Dists: make([]*splitaxes.Dist, len(chunks))}
	for a, axis := range chunks {
		d.Grid[a] = len(axis)
		for _, n := range axis {
			d.Shape[a] += n
		}
	}
	return d
}

// NumProcs returns the number of processes (partitions): the product of
// the grid.
func (d Distribution) NumProcs() int {
	n := 1
	for _, g := range d.Grid {
		n *= g
	}
	return n
}

// DimData returns the description of process rank's local array: what an
// output partition is delivered with.
func (d Distribution) DimData(rank int) Local {
	coords := splitaxes.Unravel(rank, d.Grid)
	l := Local{Version: Version, DimData: make([]DimDict, len(d.Grid))}
	for a, r := range coords {
		l.DimData[a] = d.dimDict(a, r)
	}
	return l
}

// dimDict returns the dictionary of rank r on axis a.
func (d Distribution) dimDict(a, r int) DimDict {
	dd := DimDict{Size: d.Shape[a], ProcGridSize: d.Grid[a], ProcGridRank: r}
	ds := d.Dists[a]
	switch {
	case ds == nil:
		start := int64(0)
		for _, n := range d.Chunks[a][:r] {
			start += n
		}
		dd.DistType, dd.Start, dd.Stop = "b", ptr(start), ptr(start+d.Chunks[a][r])
	case ds.Type == splitaxes.Block:
		dd.DistType, dd.Start, dd.Stop, dd.Periodic = "b", ptr(ds.Starts[r]), ptr(ds.Starts[r]+d.Chunks[a][r]), ds.Periodic
		if ds.Pad[r] != [2]int64{} {
			p := ds.Pad[r]
			dd.Padding = &p
		}
	case ds.Type == splitaxes.Cyclic:
		dd.DistType, dd.Start, dd.BlockSize = "c", ptr(min(int64(r)*ds.BlockSize, ds.Size)), ptr(ds.BlockSize)
	default:
		dd.DistType, dd.Indices, dd.OneToOne = "u", ds.Indices[r], ptr(true)
	}
	return dd
}

func ptr[T any](v T) *T { return &v }

// Spec builds the array shuffle that redistributes an array of dtype from
// in to out: task p is input process p's local array (its whole buffer,
// padding included), partition q output process q's. The error wraps
// ErrSize (the shapes differ) or spec.ErrInvalid.
func Spec(id, dtype string, in, out Distribution) (*spec.Spec, error) {
	if fmt.Sprint(in.Shape) != fmt.Sprint(out.Shape) {
		return nil, fmt.Errorf("shuffle %s: input shape %v, output shape %v: %w", id, in.Shape, out.Shape, ErrSize)
	}
	sp := spec.ArraySpec(id, dtype, in.Chunks, out.Chunks)
	if anyDist(in.Dists) {
		sp.OldDist = in.Dists
	}
	if anyDist(out.Dists) {
		sp.NewDist = out.Dists
	}
	if _, err := sp.Validate(); err != nil {
		return nil, err
	}
	return sp, nil
}

func anyDist(ds []*splitaxes.Dist) bool {
	for _, d := range ds {
		if d != nil {
			return true
		}
	}
	return false
}

// Globals returns the global index of every buffer position of grid rank r
// on axis a (a padding position: the index it copies). The error wraps an
// error of splitaxes.SideOf.
func (d Distribution) Globals(a, r int) ([]int64, error) {
	s, err := splitaxes.SideOf(d.Dists[a], d.Shape[a], d.Chunks[a], false)
	if err != nil {
		return nil, err
	}
	out, g := make([]int64, d.Chunks[a][r]), d.Dists[a].Ghosts()
	for _, run := range s.Runs {
		if run.Chunk == r {
			for k := range run.Len {
				out[run.Local+k] = splitaxes.Wrap(run.Global+k, d.Shape[a], g)
			}
		}
	}
	return out, nil
}

// Output returns the Distribution of an array spec's new side, whose
// DimData is what each output partition is delivered with.
func Output(sp *spec.Spec) Distribution { return specSide(sp.NewChunks, sp.NewDist) }

// Input returns the Distribution of an array spec's old side.
func Input(sp *spec.Spec) Distribution { return specSide(sp.OldChunks, sp.OldDist) }

func specSide(chunks [][]int64, dists []*splitaxes.Dist) Distribution {
	d := Regular(chunks)
	if dists == nil {
		return d
	}
	d.Dists = dists
	for a, ds := range dists {
		if ds != nil {
			d.Shape[a] = ds.Size
		}
	}
	return d
}
