package dap

import "github.com/shufflenode/shufflenode/splitaxes"

// owned returns the owned range of a 'b' dictionary of rank r of last+1:
// its buffer less its communication padding (boundary padding is owned,
// but on a periodic axis it is a ghost zone, a copy: not owned).
func (d DimDict) owned(last int) (lo, hi int64) {
	p := d.comm(last)
	return *d.Start + p[0], *d.Stop - p[1]
}

// comm returns the padding that is not owned: the padding but at the edges
// of the grid, where it is boundary padding, unless the axis is periodic.
func (d DimDict) comm(last int) [2]int64 {
	p := d.pad()
	if d.Periodic {
		return p
	}
	if d.ProcGridRank == 0 {
		p[0] = 0
	}
	if d.ProcGridRank == last {
		p[1] = 0
	}
	return p
}

// blockAxis checks that the ranks' owned ranges tile [0, size) in rank
// order and that every communication padding matches its neighbour's and
// fits in the neighbour's owned range. An axis without communication
// padding is regular (nil Dist).
func blockAxis(dicts []DimDict, rep []int, a int) ([]int64, *splitaxes.Dist, error) {
	last := len(dicts) - 1
	if err := checkPeriodic(dicts, rep, a); err != nil {
		return nil, nil, err
	}
	if err := tile(dicts, rep, a); err != nil {
		return nil, nil, err
	}
	sizes := make([]int64, len(dicts))
	dist := &splitaxes.Dist{Type: splitaxes.Block, Size: dicts[0].Size, Starts: make([]int64, len(dicts)), Pad: make([][2]int64, len(dicts)), Periodic: dicts[0].Periodic}
	padded := dist.Periodic
	for r, d := range dicts {
		if err := checkNeighbour(dicts, rep, r, a); err != nil {
			return nil, nil, err
		}
		sizes[r], dist.Starts[r], dist.Pad[r] = *d.Stop-*d.Start, *d.Start, d.comm(last)
		padded = padded || dist.Pad[r] != [2]int64{}
	}
	if !padded {
		return sizes, nil, nil
	}
	return sizes, dist, nil
}

// ghostZones returns the ghost zone widths of a periodic axis (rank 0's
// padding before, the last rank's after); zero if not periodic.
func ghostZones(dicts []DimDict) [2]int64 {
	if !dicts[0].Periodic {
		return [2]int64{}
	}
	return [2]int64{dicts[0].pad()[0], dicts[len(dicts)-1].pad()[1]}
}

// checkPeriodic checks that every rank agrees on periodic and that the
// period (the indices that are no ghost) is at least as long as each ghost
// zone, which copies it.
func checkPeriodic(dicts []DimDict, rep []int, a int) error {
	for r, d := range dicts {
		if d.Periodic != dicts[0].Periodic {
			return keyErr(rep[r], a, "periodic", ErrInconsistent, "%v, rank 0 has %v", d.Periodic, dicts[0].Periodic)
		}
	}
	g := ghostZones(dicts)
	if period := dicts[0].Size - g[0] - g[1]; period < max(g[0], g[1]) {
		return keyErr(rep[0], a, "padding", ErrPadding, "periodic ghost zones %v longer than the period of %d indices", g, period)
	}
	return nil
}

// tile checks that the owned ranges follow each other from 0 to size (on a
// periodic axis, from the end of the ghost zone before to the start of the
// one after).
func tile(dicts []DimDict, rep []int, a int) error {
	g := ghostZones(dicts)
	last, at := len(dicts)-1, g[0]
	for r, d := range dicts {
		lo, hi := d.owned(last)
		if lo > at {
			return keyErr(rep[r], a, "start", ErrMissing, "indices [%d, %d) owned by no process", at, lo)
		}
		if lo < at {
			return keyErr(rep[r], a, "start", ErrOverlap, "owns from %d, the rank before owns up to %d", lo, at)
		}
		at = hi
	}
	if size := dicts[0].Size; at != size-g[1] {
		return keyErr(rep[last], a, "stop", ErrSize, "owned indices end at %d, size is %d (ghost zone after %d)", at, size, g[1])
	}
	return nil
}

// checkNeighbour checks rank r's communication padding after it against
// rank r+1's before it and against the owned ranges it copies.
func checkNeighbour(dicts []DimDict, rep []int, r, a int) error {
	last := len(dicts) - 1
	if r == last {
		return nil
	}
	right, left := dicts[r].comm(last)[1], dicts[r+1].comm(last)[0]
	lo, hi := dicts[r].owned(last)
	nlo, nhi := dicts[r+1].owned(last)
	switch {
	case right != left:
		return keyErr(rep[r], a, "padding", ErrPadding, "%d after, rank %d has %d before", right, r+1, left)
	case right > nhi-nlo:
		return keyErr(rep[r], a, "padding", ErrPadding, "%d wider than rank %d's %d owned indices", right, r+1, nhi-nlo)
	case left > hi-lo:
		return keyErr(rep[r+1], a, "padding", ErrPadding, "%d wider than rank %d's %d owned indices", left, r, hi-lo)
	}
	return nil
}

// unstructuredAxis checks that the ranks' indices hold every index of
// [0, size) exactly once: as many as size (else an index is missing, which
// is ErrSize), none twice.
func unstructuredAxis(dicts []DimDict, rep []int, a int) ([]int64, *splitaxes.Dist, error) {
	size, n := dicts[0].Size, int64(0)
	for _, d := range dicts {
		n += int64(len(d.Indices))
	}
	if n != size {
		return nil, nil, keyErr(rep[0], a, "size", ErrSize, "the ranks own %d indices, size is %d", n, size)
	}
	owner := make([]int32, size)
	sizes := make([]int64, len(dicts))
	dist := &splitaxes.Dist{Type: splitaxes.Unstructured, Size: size, Indices: make([][]int64, len(dicts))}
	for r, d := range dicts {
		for _, g := range d.Indices {
			if owner[g] != 0 {
				return nil, nil, keyErr(rep[r], a, "indices", ErrOverlap, "index %d, also owned by rank %d", g, owner[g]-1)
			}
			owner[g] = int32(r + 1)
		}
		sizes[r], dist.Indices[r] = int64(len(d.Indices)), d.Indices
	}
	return sizes, dist, nil // size indices, none twice: none missing
}
