package splitaxes

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"sync"
)

// Unknown marks a chunk size that is not known until the data exists (NaN in
// Dask). As a Split's Stop it marks an open-ended slice: up to the end of the
// old chunk, whatever its size turns out to be.
const Unknown int64 = -1

// maxChunks bounds len(old)+len(new) of one axis, so piece indices fit int32.
const maxChunks = math.MaxInt32

// Split is one piece of one old chunk along one axis.
type Split struct {
	// OldChunk is the index of the old chunk along the axis.
	OldChunk int
	// NewChunk is the index of the new chunk along the axis the piece goes to.
	NewChunk int
	// SplitIndex is the position of the piece among the pieces that,
	// concatenated in order, make up NewChunk.
	SplitIndex int
	// Start is the first element of the piece, local to the old chunk.
	Start int64
	// Stop is the end (exclusive) of the piece, local to the old chunk, or
	// Unknown when the piece is open-ended (it runs to the chunk's end).
	Stop int64
	// Offset is where the piece starts inside the new chunk.
	Offset int64
	// Segs is nil for a contiguous piece. On a run axis (NewRunAxis) the
	// piece is gathered: it holds Segs one after another, Start is 0, Stop
	// its length and Offset 0; each Seg says where its stretch sits in the
	// old and in the new chunk. Segs is shared with the plan: read only.
	Segs []Seg
}

// OpenEnded reports whether the piece runs to the end of an old chunk of
// unknown size.
func (s Split) OpenEnded() bool { return s.Stop == Unknown }

// Len returns Stop-Start, or Unknown for an open-ended piece.
func (s Split) Len() int64 {
	if s.OpenEnded() {
		return Unknown
	}
	return s.Stop - s.Start
}

// piece is the stored form of a Split of a known axis: everything else
// follows from the chunk boundaries. pos is where the piece starts on the
// axis; it ends at the nearer of its old and new chunk's ends (an empty piece
// belongs to a zero-size new chunk, which ends where it starts). Its split
// index is its position in Axis.pieces minus the first piece of its new
// chunk.
type piece struct {
	old, new int32
	pos      int64
}

// Axis is the plan of one axis: the splits of every old chunk and, as the
// inverse view, the pieces of every new chunk. It is immutable.
type Axis struct {
	numOld, numNew int
	total          int64

	// A known axis: chunk i spans [oldStart[i], oldStart[i+1]).
	oldStart, newStart []int64
	pieces             []piece // sorted by (old, pos) and by (new, split index)
	oldOff             []int32 // splits of old chunk i: pieces[oldOff[i]:oldOff[i+1]]
	newOff             []int32 // pieces of new chunk j: pieces[newOff[j]:newOff[j+1]]

	// An axis with unknown sizes: old chunk i is new chunk i, of size
	// sizes[i] (maybe Unknown).
	sizes []int64

	// A run axis: pairs grouped by old chunk (ranges in oldOff), segs their
	// stretches; byNew lists pairs by new chunk (ranges in newOff).
	pairs []pair
	segs  []Seg
	byNew []int32

	extents extents // built on first use (Extents)
}

// extents are the lengths and offsets of every new chunk's pieces, in
// split-index order, in two flat arrays that every caller shares: the
// assemblers of a rechunk's new chunks along one axis read one table
// instead of a copy each (a piece's placement then looks its size up in
// memory the previous placements already brought into the cache).
type extents struct {
	once       sync.Once
	start      []int // new chunk j's pieces: [start[j], start[j+1])
	lens, offs []int64
}

// NewAxis plans one axis, given the old and the new chunk sizes (Unknown
// allowed as the package doc says). It does not keep old or new. The error
// wraps ErrTotalMismatch, ErrUnknownChanged, ErrBadSize or ErrTooManyChunks.
func NewAxis(old, new []int64) (*Axis, error) {
	if len(old)+len(new) > maxChunks {
		return nil, fmt.Errorf("%d old and %d new chunks: %w", len(old), len(new), ErrTooManyChunks)
	}
	unknown, err := checkSizes(old, new)
	if err != nil {
		return nil, err
	}
	if unknown {
		return &Axis{numOld: len(old), numNew: len(new), total: Unknown, sizes: slices.Clone(old)}, nil
	}
	a := &Axis{numOld: len(old), numNew: len(new)}
	if a.oldStart, a.newStart, err = starts(old, new); err != nil {
		return nil, err
	}
	a.total = a.oldStart[len(old)]
	a.pieces = sweep(a.oldStart, a.newStart)
	a.oldOff = offsets(a.pieces, len(old), func(p piece) int32 { return p.old })
	a.newOff = offsets(a.pieces, len(new), func(p piece) int32 { return p.new })
	return a, nil
}

// checkSizes rejects negative sizes and reports whether the axis has unknown
// sizes, which requires identical old and new sizes.
func checkSizes(old, new []int64) (unknown bool, err error) {
	for _, side := range [...]struct {
		name  string
		sizes []int64
	}{{"old", old}, {"new", new}} {
		for i, s := range side.sizes {
			if s < 0 && s != Unknown {
				return false, fmt.Errorf("%s chunk %d has size %d: %w", side.name, i, s, ErrBadSize)
			}
			unknown = unknown || s == Unknown
		}
	}
	if unknown && !equalSizes(old, new) {
		return false, fmt.Errorf("%d old and %d new chunks: %w", len(old), len(new), ErrUnknownChanged)
	}
	return unknown, nil
}

func equalSizes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// starts returns the chunk boundaries of old and new, checking that their
// totals are equal and do not overflow.
func starts(old, new []int64) (oldStart, newStart []int64, err error) {
	oldStart, okOld := prefix(old)
	newStart, okNew := prefix(new)
	if !okOld || !okNew {
		return nil, nil, fmt.Errorf("total overflows int64: %w", ErrBadSize)
	}
	if to, tn := oldStart[len(old)], newStart[len(new)]; to != tn {
		return nil, nil, fmt.Errorf("old total %d, new total %d: %w", to, tn, ErrTotalMismatch)
	}
	return oldStart, newStart, nil
}

// prefix returns the running sums of non-negative sizes, starting at 0; ok
// is false on overflow.
func prefix(sizes []int64) (start []int64, ok bool) {
	start = make([]int64, len(sizes)+1)
	for i, s := range sizes {
		if start[i] > math.MaxInt64-s {
			return nil, false
		}
		start[i+1] = start[i] + s
	}
	return start, true
}

// offsets turns the group key of pieces (non-decreasing, in 0..n-1) into
// range offsets: group k is pieces[off[k]:off[k+1]].
func offsets(ps []piece, n int, key func(piece) int32) []int32 {
	off := make([]int32, n+1)
	for _, p := range ps {
		off[key(p)+1]++
	}
	for k := 1; k <= n; k++ {
		off[k] += off[k-1]
	}
	return off
}

// NumOld returns the number of old chunks along the axis.
func (a *Axis) NumOld() int { return a.numOld }

// NumNew returns the number of new chunks along the axis.
func (a *Axis) NumNew() int { return a.numNew }

// Total returns the length of the axis, or Unknown if it has unknown sizes.
func (a *Axis) Total() int64 { return a.total }

// NumSplits returns how many splits old chunk old has (0 if out of range).
func (a *Axis) NumSplits(old int) int {
	lo, hi := a.oldRange(old)
	return hi - lo
}

// Splits yields the splits of old chunk old, sorted by Start (nothing if old
// is out of range).
func (a *Axis) Splits(old int) iter.Seq[Split] {
	return func(yield func(Split) bool) {
		lo, hi := a.oldRange(old)
		a.yieldRange(lo, hi, yield)
	}
}

// NumPieces returns how many pieces make up new chunk new (0 if out of
// range). A receiver holding that many distinct pieces has the whole chunk.
func (a *Axis) NumPieces(new int) int {
	lo, hi := a.newRange(new)
	return hi - lo
}

// Pieces yields the pieces of new chunk new in split-index order: the
// inverse view of Splits (nothing if new is out of range).
func (a *Axis) Pieces(new int) iter.Seq[Split] {
	return func(yield func(Split) bool) {
		lo, hi := a.newRange(new)
		for q := lo; q < hi; q++ {
			if !yield(a.newSplit(q)) {
				return
			}
		}
	}
}

// Extents returns the lengths (Unknown for an open-ended piece) and the
// offsets inside new chunk new of its pieces, in split-index order: what
// Pieces yields, as slices shared by every caller, which must not modify
// them (nil if new is out of range). The first call builds them for every
// new chunk, in O(pieces of the axis).
func (a *Axis) Extents(new int) (lens, offs []int64) {
	e := &a.extents
	e.once.Do(func() {
		e.start = make([]int, a.numNew+1)
		for j := range a.numNew {
			for s := range a.Pieces(j) {
				e.lens, e.offs = append(e.lens, s.Len()), append(e.offs, s.Offset)
			}
			e.start[j+1] = len(e.lens)
		}
	})
	if new < 0 || new >= a.numNew {
		return nil, nil
	}
	lo, hi := e.start[new], e.start[new+1]
	return e.lens[lo:hi:hi], e.offs[lo:hi:hi]
}

// SplitIndex returns the split index of the piece of old chunk old inside
// new chunk new; ok is false if old contributes nothing to new.
func (a *Axis) SplitIndex(old, new int) (index int, ok bool) {
	lo, hi := a.newRange(new)
	if lo == hi {
		return 0, false
	}
	// The pieces of a new chunk come from consecutive old chunks, one
	// each, unless some old chunks are empty: try that guess first.
	if k := old - a.newSplit(lo).OldChunk; k >= 0 && k < hi-lo && a.newSplit(lo+k).OldChunk == old {
		return k, true
	}
	k := sort.Search(hi-lo, func(k int) bool { return a.newSplit(lo+k).OldChunk >= old })
	if k == hi-lo || a.newSplit(lo+k).OldChunk != old {
		return 0, false
	}
	return k, true
}

// ConsecutiveOld reports whether the pieces of new chunk new come from
// consecutive old chunks, first, first+1, ... (no empty old chunk in
// between, no run axis): then old chunk i's split index in it is i -
// first, for first <= i < first + its number of pieces. O(1).
func (a *Axis) ConsecutiveOld(new int) (first int, ok bool) {
	lo, hi := a.newRange(new)
	if lo == hi || a.IsRun() {
		return 0, false
	}
	first = a.newSplit(lo).OldChunk
	return first, a.newSplit(hi-1).OldChunk-first == hi-lo-1
}

// oldRange returns the range of the splits of old chunk i (empty if out of
// range).
func (a *Axis) oldRange(i int) (lo, hi int) {
	if a.sizes != nil {
		return identityRange(i, a.numOld)
	}
	return span(a.oldOff, i)
}

// newRange returns the range of the pieces of new chunk j (empty if out of
// range).
func (a *Axis) newRange(j int) (lo, hi int) {
	if a.sizes != nil {
		return identityRange(j, a.numNew)
	}
	return span(a.newOff, j)
}

func identityRange(k, n int) (lo, hi int) {
	if k < 0 || k >= n {
		return 0, 0
	}
	return k, k + 1
}

// span returns the piece range of group k, empty if k is out of range.
func span(off []int32, k int) (lo, hi int) {
	if k < 0 || k >= len(off)-1 {
		return 0, 0
	}
	return int(off[k]), int(off[k+1])
}

// yieldRange yields the splits of pieces lo..hi-1.
func (a *Axis) yieldRange(lo, hi int, yield func(Split) bool) {
	for q := lo; q < hi; q++ {
		if !yield(a.split(q)) {
			return
		}
	}
}

// newSplit expands entry q of the new view (newRange).
func (a *Axis) newSplit(q int) Split {
	if a.byNew != nil {
		return a.pairSplit(int(a.byNew[q]))
	}
	return a.split(q)
}

// gathers reports whether the axis's splits may be gathered pieces (with
// Segs): those of a plan of pairs or runs.
func (a *Axis) gathers() bool { return a.pairs != nil || a.byNew != nil }

// split expands entry q of the old view (oldRange).
func (a *Axis) split(q int) Split {
	if a.gathers() {
		return a.pairSplit(q)
	}
	if a.sizes != nil {
		return Split{OldChunk: q, NewChunk: q, Stop: a.sizes[q]}
	}
	p := a.pieces[q]
	oldLo, newLo := a.oldStart[p.old], a.newStart[p.new]
	stop := min(a.oldStart[p.old+1], a.newStart[p.new+1])
	return Split{
		OldChunk:   int(p.old),
		NewChunk:   int(p.new),
		SplitIndex: q - int(a.newOff[p.new]),
		Start:      p.pos - oldLo,
		Stop:       stop - oldLo,
		Offset:     p.pos - newLo,
	}
}
