package splitaxes

import (
	"fmt"
	"slices"
)

// Distribution types of a Dist (the DAP's dist_type letters).
const (
	// Block: chunk c's buffer covers [Starts[c], Starts[c]+size), less its
	// communication padding on the old side.
	Block = "b"
	// Cyclic: blocks of BlockSize indices dealt round-robin to the chunks.
	Cyclic = "c"
	// Unstructured: chunk c holds Indices[c], in local order.
	Unstructured = "u"
)

// Dist describes how one axis of an array is spread over its chunks, when
// that is not consecutive chunk sizes (a nil *Dist). The chunk sizes that go
// with it (the length of each chunk's buffer along the axis) are given
// separately, as for a regular axis.
type Dist struct {
	// Type is Block, Cyclic or Unstructured.
	Type string `json:"type"`
	// Size is the length of the axis (the DAP's size).
	Size int64 `json:"size"`
	// Starts is, for Block, the global index where each chunk's buffer
	// starts (padding included).
	Starts []int64 `json:"starts,omitempty"`
	// Pad is, for Block, the communication padding of each chunk (before,
	// after): copies of a neighbour's indices, not owned. Input drops it;
	// output fills it. nil means none.
	Pad [][2]int64 `json:"pad,omitempty"`
	// BlockSize is, for Cyclic, the number of consecutive indices dealt at
	// a time (>= 1).
	BlockSize int64 `json:"block_size,omitempty"`
	// Indices is, for Unstructured, the global indices of each chunk in
	// local order.
	Indices [][]int64 `json:"indices,omitempty"`
	// Periodic is, for Block, a periodic axis: the first chunk's padding
	// before and the last chunk's padding after are ghost zones inside
	// [0, Size) that copy the far end's data (wrap-around, see Ghosts).
	Periodic bool `json:"periodic,omitempty"`
}

// SideOf returns one side of a run axis of length total with the given
// chunk sizes, distributed as d (nil: consecutive chunks). On the old side
// (owned) the padding of a Block axis is dropped; on the new side it is kept
// and filled from the indices it copies. The error wraps ErrBadRun.
func SideOf(d *Dist, total int64, sizes []int64, owned bool) (Side, error) {
	s := Side{Sizes: sizes}
	var err error
	switch {
	case d == nil:
		s.Runs = consecutive(sizes)
	case d.Type == Block:
		s.Runs, err = d.blockRuns(sizes, owned)
	case d.Type == Cyclic:
		s.Runs, err = CyclicRuns(total, len(sizes), d.BlockSize)
		if err == nil {
			err = checkCounts(s.Runs, sizes)
		}
	case d.Type == Unstructured:
		s.Runs, err = UnstructuredRuns(d.Indices)
		if err == nil {
			err = checkCounts(s.Runs, sizes)
		}
	default:
		err = fmt.Errorf("dist type %q: %w", d.Type, ErrBadRun)
	}
	return s, err
}

// consecutive returns one run per chunk of consecutive chunk sizes.
func consecutive(sizes []int64) []Run {
	rs := make([]Run, len(sizes))
	at := int64(0)
	for c, n := range sizes {
		rs[c] = Run{Chunk: c, Global: at, Len: n}
		at += n
	}
	return rs
}

// blockRuns returns one run per chunk: its buffer, less the padding when
// owned.
func (d *Dist) blockRuns(sizes []int64, owned bool) ([]Run, error) {
	if len(d.Starts) != len(sizes) || (d.Pad != nil && len(d.Pad) != len(sizes)) {
		return nil, fmt.Errorf("block: %d starts and %d paddings for %d chunks: %w", len(d.Starts), len(d.Pad), len(sizes), ErrBadRun)
	}
	rs := make([]Run, len(sizes))
	for c, n := range sizes {
		rs[c] = Run{Chunk: c, Global: d.Starts[c], Len: n}
		if owned && d.Pad != nil {
			lo, hi := d.Pad[c][0], d.Pad[c][1]
			if lo < 0 || hi < 0 || lo+hi > n {
				return nil, fmt.Errorf("block chunk %d: padding %v of size %d: %w", c, d.Pad[c], n, ErrBadRun)
			}
			rs[c] = Run{Chunk: c, Global: d.Starts[c] + lo, Local: lo, Len: n - lo - hi}
		}
	}
	return rs, nil
}

// maxCyclicBlocks bounds the runs of one cyclic axis, so a small spec
// cannot make a node allocate without bound.
const maxCyclicBlocks = 1 << 26

// CyclicRuns returns the runs of an axis of length total dealt in blocks of
// blockSize to procs chunks round-robin, in global order: one run per
// block, O(total/blockSize).
func CyclicRuns(total int64, procs int, blockSize int64) ([]Run, error) {
	if procs < 1 || blockSize < 1 || total < 0 {
		return nil, fmt.Errorf("cyclic: %d chunks, block size %d, length %d: %w", procs, blockSize, total, ErrBadRun)
	}
	nb := (total + blockSize - 1) / blockSize
	if nb > maxCyclicBlocks {
		return nil, fmt.Errorf("cyclic: %d blocks, at most %d: %w", nb, maxCyclicBlocks, ErrTooManyChunks)
	}
	rs := make([]Run, nb)
	for b := range nb {
		g := b * blockSize
		rs[b] = Run{Chunk: int(b % int64(procs)), Global: g, Local: b / int64(procs) * blockSize, Len: min(blockSize, total-g)}
	}
	return rs, nil
}

// CyclicSizes returns how many indices each of procs chunks holds on an
// axis of length total dealt in blocks of blockSize.
func CyclicSizes(total int64, procs int, blockSize int64) []int64 {
	sizes := make([]int64, procs)
	nb := (total + blockSize - 1) / blockSize
	for c := range sizes {
		blocks := nb / int64(procs)
		if int64(c) < nb%int64(procs) {
			blocks++
		}
		sizes[c] = blocks * blockSize
		if last := nb - 1; blocks > 0 && last%int64(procs) == int64(c) {
			sizes[c] -= nb*blockSize - total // the short last block
		}
	}
	return sizes
}

// UnstructuredRuns sorts each chunk's indices (given in local order) and
// merges them into runs where both the global and the local index go on by
// one: O(n log n). Indices repeated within a chunk are ErrOverlap.
func UnstructuredRuns(indices [][]int64) ([]Run, error) {
	var rs []Run
	for c, idx := range indices {
		order := make([]int64, len(idx))
		for l := range order {
			order[l] = int64(l)
		}
		slices.SortFunc(order, func(a, b int64) int { return cmpInt(idx[a], idx[b]) })
		for k, l := range order {
			g := idx[l]
			if k > 0 && g == idx[order[k-1]] {
				return nil, fmt.Errorf("unstructured chunk %d: index %d twice: %w", c, g, ErrOverlap)
			}
			if n := len(rs); n > 0 && rs[n-1].Chunk == c && rs[n-1].Global+rs[n-1].Len == g && rs[n-1].Local+rs[n-1].Len == l {
				rs[n-1].Len++
				continue
			}
			rs = append(rs, Run{Chunk: c, Global: g, Local: l, Len: 1})
		}
	}
	return rs, nil
}

// checkCounts checks that the runs fill each chunk's size.
func checkCounts(rs []Run, sizes []int64) error {
	got := make([]int64, len(sizes))
	for _, r := range rs {
		if r.Chunk >= len(sizes) {
			return fmt.Errorf("run %+v: chunk out of range 0..%d: %w", r, len(sizes)-1, ErrBadRun)
		}
		got[r.Chunk] += r.Len
	}
	for c := range sizes {
		if got[c] != sizes[c] {
			return fmt.Errorf("chunk %d holds %d indices, its size is %d: %w", c, got[c], sizes[c], ErrBadRun)
		}
	}
	return nil
}

// NewDistAxis plans an axis from old and new chunk sizes and their
// distributions (nil: consecutive chunks), through NewRunAxis. The length
// of the axis is the Dists' Size (they must agree) or, for a nil Dist, the
// total of its sizes. The error wraps ErrTotalMismatch or an error of
// SideOf or NewRunAxis.
func NewDistAxis(oldSizes []int64, oldDist *Dist, newSizes []int64, newDist *Dist) (*Axis, error) {
	total, err := distTotal(oldSizes, oldDist, newSizes, newDist)
	if err != nil {
		return nil, err
	}
	old, err := SideOf(oldDist, total, oldSizes, true)
	if err != nil {
		return nil, fmt.Errorf("old: %w", err)
	}
	new, err := SideOf(newDist, total, newSizes, false)
	if err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	g, err := axisGhosts(oldDist, newDist, total)
	if err != nil {
		return nil, err
	}
	if g == (ghosts{}) {
		return NewRunAxis(total, old, new)
	}
	old.Runs, new.Runs = g.wrapOld(old.Runs, total), g.wrapNew(new.Runs, total)
	a, err := NewRunAxis(total-g[0]-g[1], old, new)
	if err != nil {
		return nil, err
	}
	a.total = total // planned over the period, the axis keeps its length
	return a, nil
}

// distTotal returns the length of an axis both of whose sides must agree
// on it.
func distTotal(oldSizes []int64, oldDist *Dist, newSizes []int64, newDist *Dist) (int64, error) {
	to, tn := sideTotal(oldSizes, oldDist), sideTotal(newSizes, newDist)
	if to != tn {
		return 0, fmt.Errorf("old length %d, new length %d: %w", to, tn, ErrTotalMismatch)
	}
	return to, nil
}

func sideTotal(sizes []int64, d *Dist) int64 {
	if d != nil {
		return d.Size
	}
	n := int64(0)
	for _, s := range sizes {
		n += s
	}
	return n
}
