package dap

import "github.com/shufflenode/shufflenode/splitaxes"

// checkBlock checks a 'b' dictionary: 0 <= start <= stop <= size, the
// buffer is stop-start long and the padding fits in it.
func (d DimDict) checkBlock(proc, axis int, n int64) error {
	start, stop := *d.Start, *d.Stop
	switch {
	case start < 0 || start > d.Size:
		return keyErr(proc, axis, "start", ErrBadValue, "%d not in 0..%d", start, d.Size)
	case stop < start || stop > d.Size:
		return keyErr(proc, axis, "stop", ErrBadValue, "%d not in %d..%d", stop, start, d.Size)
	case stop-start != n:
		return keyErr(proc, axis, "stop", ErrSize, "stop-start = %d, the buffer has %d", stop-start, n)
	}
	if p := d.pad(); p[0] < 0 || p[1] < 0 || p[0]+p[1] > n {
		return keyErr(proc, axis, "padding", ErrPadding, "%v in a buffer of %d", p, n)
	}
	return nil
}

// pad returns the padding, (0, 0) when absent.
func (d DimDict) pad() [2]int64 {
	if d.Padding == nil {
		return [2]int64{}
	}
	return *d.Padding
}

// blockSize returns block_size, 1 when absent.
func (d DimDict) blockSize() int64 {
	if d.BlockSize == nil {
		return 1
	}
	return *d.BlockSize
}

// checkCyclic checks a 'c' dictionary: block_size >= 1, start is the
// rank's first block and the buffer holds the rank's share.
func (d DimDict) checkCyclic(proc, axis int, n int64) error {
	bs := d.blockSize()
	if bs < 1 {
		return keyErr(proc, axis, "block_size", ErrBadValue, "%d < 1", bs)
	}
	if want := min(int64(d.ProcGridRank)*bs, d.Size); *d.Start != want {
		return keyErr(proc, axis, "start", ErrBadValue, "%d, rank %d of block size %d starts at %d", *d.Start, d.ProcGridRank, bs, want)
	}
	if want := splitaxes.CyclicSizes(d.Size, d.ProcGridSize, bs)[d.ProcGridRank]; n != want {
		return keyErr(proc, axis, "size", ErrSize, "rank %d of %d owns %d of %d indices, the buffer has %d", d.ProcGridRank, d.ProcGridSize, want, d.Size, n)
	}
	return nil
}

// checkUnstructured checks a 'u' dictionary: one index per buffer element,
// each in 0..size-1, none twice (one_to_one false is not supported).
func (d DimDict) checkUnstructured(proc, axis int, n int64) error {
	if int64(len(d.Indices)) != n {
		return keyErr(proc, axis, "indices", ErrSize, "%d indices, the buffer has %d", len(d.Indices), n)
	}
	if d.OneToOne != nil && !*d.OneToOne {
		return keyErr(proc, axis, "one_to_one", ErrBadValue, "false (indices held by several processes) is not supported")
	}
	seen := make(map[int64]struct{}, len(d.Indices))
	for _, g := range d.Indices {
		if g < 0 || g >= d.Size {
			return keyErr(proc, axis, "indices", ErrBadValue, "index %d not in 0..%d", g, d.Size-1)
		}
		if _, ok := seen[g]; ok {
			return keyErr(proc, axis, "indices", ErrDuplicate, "index %d twice", g)
		}
		seen[g] = struct{}{}
	}
	return nil
}
