package dap

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// Distribution is a distributed array's layout as an array shuffle sees it:
// per axis, the buffer length of each grid rank (its chunk sizes) and how
// global indices sit in the buffers (nil: consecutive chunks, a regular
// axis).
type Distribution struct {
	// Shape is the global size of each axis.
	Shape []int64
	// Grid is the process grid: ranks per axis.
	Grid []int
	// Chunks is, per axis, each grid rank's buffer length.
	Chunks [][]int64
	// Dists is, per axis, the distribution (nil: consecutive chunks).
	Dists []*splitaxes.Dist
}

// FromLocals checks the descriptions of every process of a distributed
// array (process i is rank i, each already checked by Decode or Check)
// against each other and returns the array's Distribution. Communication
// padding is not owned: an input drops it. The error wraps ErrGrid,
// ErrInconsistent, ErrOverlap, ErrMissing, ErrPadding or ErrSize, naming
// the process, the axis and the key.
func FromLocals(ls []Local) (Distribution, error) {
	if len(ls) == 0 {
		return Distribution{}, fmt.Errorf("no processes: %w", ErrGrid)
	}
	reps, err := gridReps(ls)
	if err != nil {
		return Distribution{}, err
	}
	nd := len(reps)
	dist := Distribution{Shape: make([]int64, nd), Grid: make([]int, nd), Chunks: make([][]int64, nd), Dists: make([]*splitaxes.Dist, nd)}
	for a, rep := range reps {
		d := ls[rep[0]].DimData[a]
		dist.Shape[a], dist.Grid[a] = d.Size, d.ProcGridSize
		dicts := make([]DimDict, len(rep))
		for r, p := range rep {
			dicts[r] = ls[p].DimData[a]
		}
		if dist.Chunks[a], dist.Dists[a], err = axisDist(dicts, rep, a); err != nil {
			return Distribution{}, err
		}
	}
	return dist, nil
}

// gridReps checks the process grid and that processes on one rank of an
// axis agree, and returns per axis the first process of each rank.
func gridReps(ls []Local) ([][]int, error) {
	first := ls[0].DimData
	grid, n := make([]int, len(first)), 1
	for a, d := range first {
		grid[a], n = d.ProcGridSize, n*d.ProcGridSize
	}
	if n != len(ls) {
		return nil, keyErr(0, -1, "proc_grid_size", ErrGrid, "grid %v has %d processes, there are %d", grid, n, len(ls))
	}
	reps := make([][]int, len(grid))
	for a, g := range grid {
		reps[a] = slices.Repeat([]int{-1}, g)
	}
	for p, l := range ls {
		if err := placeProcess(ls, p, l, grid, reps); err != nil {
			return nil, err
		}
	}
	return reps, nil
}

// placeProcess checks process p's grid ranks (its C-order coordinates) and
// that it agrees with the first process on each of its ranks.
func placeProcess(ls []Local, p int, l Local, grid []int, reps [][]int) error {
	if len(l.DimData) != len(grid) {
		return keyErr(p, -1, "dim_data", ErrInconsistent, "%d axes, process 0 has %d", len(l.DimData), len(grid))
	}
	coords := splitaxes.Unravel(p, grid)
	for a, d := range l.DimData {
		switch {
		case d.ProcGridSize != grid[a]:
			return keyErr(p, a, "proc_grid_size", ErrGrid, "%d, process 0 says %d", d.ProcGridSize, grid[a])
		case d.ProcGridRank != coords[a]:
			return keyErr(p, a, "proc_grid_rank", ErrGrid, "%d, but process %d sits at %v of grid %v", d.ProcGridRank, p, coords, grid)
		}
		if err := agree(ls[0].DimData[a], d, p, a, false); err != nil {
			return err
		}
		if rep := reps[a][coords[a]]; rep < 0 {
			reps[a][coords[a]] = p
		} else if err := agree(ls[rep].DimData[a], d, p, a, true); err != nil {
			return err
		}
	}
	return nil
}

// agree checks that d (of process p) matches ref: dist_type and size
// always, and every key but padding when sameRank.
func agree(ref, d DimDict, p, a int, sameRank bool) error {
	switch {
	case d.DistType != ref.DistType:
		return keyErr(p, a, "dist_type", ErrInconsistent, "%q, another process says %q", d.DistType, ref.DistType)
	case d.Size != ref.Size:
		return keyErr(p, a, "size", ErrInconsistent, "%d, another process says %d", d.Size, ref.Size)
	case d.blockSize() != ref.blockSize():
		return keyErr(p, a, "block_size", ErrInconsistent, "%d, another process says %d", d.blockSize(), ref.blockSize())
	case !sameRank:
		return nil
	case !eqPtr(d.Start, ref.Start) || !eqPtr(d.Stop, ref.Stop):
		return keyErr(p, a, "start", ErrInconsistent, "start/stop differ from another process on rank %d", d.ProcGridRank)
	case !slices.Equal(d.Indices, ref.Indices):
		return keyErr(p, a, "indices", ErrInconsistent, "differ from another process on rank %d", d.ProcGridRank)
	}
	return nil
}

func eqPtr(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// axisDist returns the chunk sizes and distribution of one axis from the
// dictionary of each rank (rep[r] is the process it comes from).
func axisDist(dicts []DimDict, rep []int, a int) ([]int64, *splitaxes.Dist, error) {
	switch dicts[0].DistType {
	case "b":
		return blockAxis(dicts, rep, a)
	case "c":
		d := dicts[0]
		return splitaxes.CyclicSizes(d.Size, d.ProcGridSize, d.blockSize()),
			&splitaxes.Dist{Type: splitaxes.Cyclic, Size: d.Size, BlockSize: d.blockSize()}, nil
	}
	return unstructuredAxis(dicts, rep, a)
}
