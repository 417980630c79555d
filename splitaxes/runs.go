package splitaxes

import (
	"fmt"
	"slices"
)

// Run is a stretch of consecutive global indices of one axis that one chunk
// holds at consecutive local positions: global indices [Global, Global+Len)
// sit at [Local, Local+Len) of chunk Chunk.
type Run struct {
	Chunk  int
	Global int64
	Local  int64
	Len    int64
}

// Side is one side (old or new) of a run axis: the length of every chunk
// along the axis and the runs that place global indices in the chunks.
type Side struct {
	// Sizes is the length of each chunk along the axis (its buffer, padding
	// included).
	Sizes []int64
	// Runs place global indices in the chunks, in any order; empty runs are
	// ignored.
	Runs []Run
}

// Seg is one stretch of a gathered piece along a run axis: Len elements at
// Old in the old chunk and at New in the new chunk (local positions). The
// piece holds its segments one after another, in order.
type Seg struct {
	Old, New, Len int64
}

// pair is every segment one old chunk sends one new chunk along a run axis:
// segs[lo:hi] of the axis, Len elements in all.
type pair struct {
	old, new int32
	splitIdx int32
	lo, hi   int32
	len      int64
}

// rawSeg is a segment with its chunks, as the sweep finds it.
type rawSeg struct {
	old, new int32
	seg      Seg
}

// NewRunAxis plans an axis of length total whose old and new chunks hold
// runs of global indices (block, block-cyclic or unstructured
// distributions). The old runs must hold every global index exactly once;
// the new runs must hold every index at least once (a new chunk may repeat
// its neighbour's indices as padding) and must fill every new chunk exactly.
// Old chunks may hold positions no run names (padding, dropped).
//
// The split of the axis is one sweep over both sides' runs sorted by global
// index: O(R_old + R_new) when both come sorted (as Cyclic makes them), plus
// a sort otherwise. Every (old chunk, new chunk) pair that shares indices
// becomes one Split whose Segs list the stretches it carries, so the n-d
// machinery (NDSplits, Pieces, SplitIndex) works unchanged: a piece is the
// dense gather of its segments.
//
// The error wraps ErrBadRun, ErrOverlap, ErrGap or ErrTooManyChunks.
func NewRunAxis(total int64, old, new Side) (*Axis, error) {
	if len(old.Sizes)+len(new.Sizes) > maxChunks {
		return nil, fmt.Errorf("%d old and %d new chunks: %w", len(old.Sizes), len(new.Sizes), ErrTooManyChunks)
	}
	or, err := checkSide("old", total, old)
	if err != nil {
		return nil, err
	}
	nr, err := checkSide("new", total, new)
	if err != nil {
		return nil, err
	}
	if err := checkPartition(or, total); err != nil {
		return nil, err
	}
	if err := checkCover(nr, total); err != nil {
		return nil, err
	}
	if err := checkFill(nr, new.Sizes); err != nil {
		return nil, err
	}
	a := &Axis{numOld: len(old.Sizes), numNew: len(new.Sizes), total: total}
	a.group(sweepRuns(or, nr))
	return a, nil
}

// checkSide checks every run's bounds and returns the non-empty runs sorted
// by global index (sorted only if they were not).
func checkSide(name string, total int64, s Side) ([]Run, error) {
	for c, n := range s.Sizes {
		if n < 0 {
			return nil, fmt.Errorf("%s chunk %d has size %d: %w", name, c, n, ErrBadSize)
		}
	}
	out := make([]Run, 0, len(s.Runs))
	for _, r := range s.Runs {
		if err := checkRun(r, total, s.Sizes); err != nil {
			return nil, fmt.Errorf("%s %w", name, err)
		}
		if r.Len > 0 {
			out = append(out, r)
		}
	}
	if !slices.IsSortedFunc(out, cmpGlobal) {
		slices.SortFunc(out, cmpGlobal)
	}
	return out, nil
}

func cmpGlobal(a, b Run) int {
	if a.Global != b.Global {
		return cmpInt(a.Global, b.Global)
	}
	return a.Chunk - b.Chunk
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkRun checks one run against the axis length and its chunk's size.
func checkRun(r Run, total int64, sizes []int64) error {
	switch {
	case r.Chunk < 0 || r.Chunk >= len(sizes):
		return fmt.Errorf("run %+v: chunk out of range 0..%d: %w", r, len(sizes)-1, ErrBadRun)
	case r.Len < 0 || r.Global < 0 || r.Local < 0:
		return fmt.Errorf("run %+v: negative: %w", r, ErrBadRun)
	case r.Global > total-r.Len:
		return fmt.Errorf("run %+v: past the axis length %d: %w", r, total, ErrBadRun)
	case r.Local > sizes[r.Chunk]-r.Len:
		return fmt.Errorf("run %+v: past the chunk size %d: %w", r, sizes[r.Chunk], ErrBadRun)
	}
	return nil
}

// checkPartition checks that sorted runs hold every index of [0, total)
// exactly once.
func checkPartition(rs []Run, total int64) error {
	at := int64(0)
	for _, r := range rs {
		if r.Global < at {
			return fmt.Errorf("old index %d held twice (chunk %d): %w", r.Global, r.Chunk, ErrOverlap)
		}
		if r.Global > at {
			return fmt.Errorf("old indices [%d, %d) held by no chunk: %w", at, r.Global, ErrGap)
		}
		at = r.Global + r.Len
	}
	if at != total {
		return fmt.Errorf("old indices [%d, %d) held by no chunk: %w", at, total, ErrGap)
	}
	return nil
}

// checkCover checks that sorted runs hold every index of [0, total) at
// least once.
func checkCover(rs []Run, total int64) error {
	at := int64(0)
	for _, r := range rs {
		if r.Global > at {
			return fmt.Errorf("new indices [%d, %d) held by no chunk: %w", at, r.Global, ErrGap)
		}
		at = max(at, r.Global+r.Len)
	}
	if at != total {
		return fmt.Errorf("new indices [%d, %d) held by no chunk: %w", at, total, ErrGap)
	}
	return nil
}

// checkFill checks that the runs of every new chunk fill it exactly: its
// local positions [0, size) each once.
func checkFill(rs []Run, sizes []int64) error {
	byChunk := bucket(rs, len(sizes), func(r Run) int { return r.Chunk })
	for c := range sizes {
		runs := byChunk.group(c)
		if !slices.IsSortedFunc(runs, cmpLocal) {
			slices.SortFunc(runs, cmpLocal)
		}
		at := int64(0)
		for _, r := range runs {
			if r.Local < at {
				return fmt.Errorf("new chunk %d: local position %d filled twice: %w", c, r.Local, ErrOverlap)
			}
			if r.Local > at {
				return fmt.Errorf("new chunk %d: local positions [%d, %d) filled by no run: %w", c, at, r.Local, ErrGap)
			}
			at += r.Len
		}
		if at != sizes[c] {
			return fmt.Errorf("new chunk %d: local positions [%d, %d) filled by no run: %w", c, at, sizes[c], ErrGap)
		}
	}
	return nil
}

func cmpLocal(a, b Run) int { return cmpInt(a.Local, b.Local) }

// buckets is a stable counting sort of items by a key in 0..n-1: group k is
// items[off[k]:off[k+1]].
type buckets[T any] struct {
	items []T
	off   []int
}

func bucket[T any](xs []T, n int, key func(T) int) buckets[T] {
	b := buckets[T]{items: make([]T, len(xs)), off: make([]int, n+1)}
	for _, x := range xs {
		b.off[key(x)+1]++
	}
	for k := 1; k <= n; k++ {
		b.off[k] += b.off[k-1]
	}
	next := slices.Clone(b.off[:n])
	for _, x := range xs {
		k := key(x)
		b.items[next[k]] = x
		next[k]++
	}
	return b
}

func (b buckets[T]) group(k int) []T { return b.items[b.off[k]:b.off[k+1]] }

// sweepRuns intersects the old runs (a partition, sorted) with the new runs
// (a cover, sorted): for each new run, a cursor finds the old run holding
// its start and walks on to its end. The cursor only moves forward, and new
// runs overlap only by their padding, so the sweep is O(R_old + R_new +
// segments).
func sweepRuns(old, new []Run) []rawSeg {
	out := make([]rawSeg, 0, len(old)+len(new)) // enough unless new runs overlap
	i := 0
	for _, n := range new {
		for old[i].Global+old[i].Len <= n.Global {
			i++
		}
		end := n.Global + n.Len
		for k := i; k < len(old) && old[k].Global < end; k++ {
			o := old[k]
			lo, hi := max(o.Global, n.Global), min(o.Global+o.Len, end)
			out = append(out, rawSeg{old: int32(o.Chunk), new: int32(n.Chunk),
				seg: Seg{Old: o.Local + lo - o.Global, New: n.Local + lo - n.Global, Len: hi - lo}})
		}
	}
	return out
}

// group turns the segments into pairs: grouped by old chunk (a counting
// sort, stable), then by new chunk in order of first appearance, each
// pair's segments contiguous and merged where both sides continue. The new
// view lists each new chunk's pairs by old chunk, which is their split
// index order. Linear in the number of segments and chunks.
func (a *Axis) group(raw []rawSeg) {
	byOld := bucket(raw, a.numOld, func(s rawSeg) int { return int(s.old) })
	slot := make([]int32, a.numNew) // pair index + 1 of new chunk j in the current old chunk
	a.oldOff = make([]int32, a.numOld+1)
	a.pairs, a.segs = make([]pair, 0, len(raw)), make([]Seg, 0, len(raw))
	for i := range a.numOld {
		segs := byOld.group(i)
		first := len(a.pairs)
		for _, s := range segs {
			if k := slot[s.new]; k == 0 || int(k-1) < first {
				a.pairs = append(a.pairs, pair{old: s.old, new: s.new})
				slot[s.new] = int32(len(a.pairs))
			}
		}
		a.fillPairs(segs, first, slot)
		a.oldOff[i+1] = int32(len(a.pairs))
	}
	a.indexNew()
}

// fillPairs appends the segments of old chunk segs to the pairs from first
// on, pair by pair, merging continuing stretches.
func (a *Axis) fillPairs(segs []rawSeg, first int, slot []int32) {
	byPair := bucket(segs, len(a.pairs)-first, func(s rawSeg) int { return int(slot[s.new]-1) - first })
	for k := first; k < len(a.pairs); k++ {
		p := &a.pairs[k]
		p.lo = int32(len(a.segs))
		for _, s := range byPair.group(k - first) {
			p.len += s.seg.Len
			if n := len(a.segs); n > int(p.lo) && continues(a.segs[n-1], s.seg) {
				a.segs[n-1].Len += s.seg.Len
				continue
			}
			a.segs = append(a.segs, s.seg)
		}
		p.hi = int32(len(a.segs))
	}
}

func continues(prev, next Seg) bool {
	return prev.Old+prev.Len == next.Old && prev.New+prev.Len == next.New
}

// indexNew builds the new view: byNew lists each new chunk's pairs in old
// chunk order, and each pair learns its split index.
func (a *Axis) indexNew() {
	idx := make([]int32, len(a.pairs))
	for k := range idx {
		idx[k] = int32(k)
	}
	b := bucket(idx, a.numNew, func(k int32) int { return int(a.pairs[k].new) })
	a.byNew = b.items
	a.newOff = make([]int32, a.numNew+1)
	for j := range a.numNew {
		a.newOff[j+1] = int32(b.off[j+1])
		for s, k := range b.group(j) {
			a.pairs[k].splitIdx = int32(s)
		}
	}
}

// pairSplit expands pair k of a run axis: a gathered piece of p.len
// elements, Start 0 and Offset 0, its stretches in Segs.
func (a *Axis) pairSplit(k int) Split {
	p := a.pairs[k]
	return Split{OldChunk: int(p.old), NewChunk: int(p.new), SplitIndex: int(p.splitIdx),
		Stop: p.len, Segs: a.segs[p.lo:p.hi:p.hi]}
}

// IsRun reports whether the axis was planned from runs (NewRunAxis): its
// splits are gathered pieces with Segs.
func (a *Axis) IsRun() bool { return a.byNew != nil }
