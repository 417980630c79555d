package rechunk

import (
	"fmt"
	"iter"
	"slices"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// Assembler builds one new chunk from its pieces, each placed straight into
// one buffer of the chunk's final size. Create it with NewAssembler; it is
// not safe for concurrent use.
type Assembler struct {
	cfg   Config
	plan  *splitaxes.Plan
	index []int // the new chunk
	dtype DType
	// lens[d][k] and offs[d][k] are the length (maybe Unknown) and the
	// offset inside the chunk of split k along axis d.
	lens, offs [][]int64
	// segs[d][k] are the stretches of split k along run axis d (nil along
	// other axes); segs is nil when the plan has no run axis.
	segs     [][][]splitaxes.Seg
	shape    []int64  // final shape; Unknown entries until the first piece
	data     []byte   // nil until the first piece
	placed   []uint64 // bitset over linear split indices
	total, n int      // pieces needed, pieces placed
	// split, org and zero are scratch for placing a piece without
	// allocating: its split index, its origin in the chunk, and the origin
	// of the piece itself (all zeros).
	split     []int
	org, zero []int64
	// firstOld[d] is the old chunk of the first piece along axis d when
	// every axis's pieces come from consecutive old chunks (see
	// splitaxes.Axis.ConsecutiveOld), else nil: a split index is then a
	// subtraction.
	firstOld []int
	// inline holds split, org, zero and firstOld up to stackDims axes, in
	// the assembler's own memory: a receiver places one-element pieces in
	// thousands of assemblers in turn, and each separate allocation it
	// touches per piece is one more cache miss.
	inline struct {
		split, firstOld          [stackDims]int
		org, zero, shape, stride [stackDims]int64
	}
	// strides are the byte strides of the chunk's axes, set with its
	// buffer.
	strides []int64
}

// NewAssembler returns an assembler for new chunk newIndex of plan, of dtype
// dt. The error wraps ErrDType or an index error of splitaxes.
func NewAssembler(plan *splitaxes.Plan, newIndex []int, dt DType, cfg Config) (*Assembler, error) {
	if !dt.valid() {
		return nil, fmt.Errorf("new chunk %v: dtype %q: %w", newIndex, dt, ErrDType)
	}
	total, err := plan.NumPieces(newIndex)
	if err != nil {
		return nil, fmt.Errorf("new chunk %v: %w", newIndex, err)
	}
	a := &Assembler{cfg: cfg, plan: plan, index: slices.Clone(newIndex), dtype: dt, total: total}
	a.lens, a.offs, a.shape = axisPieces(plan, newIndex)
	a.segs = axisSegs(plan, newIndex)
	a.placed = make([]uint64, (total+63)/64)
	n := len(newIndex)
	if n <= stackDims {
		a.split, a.org, a.zero = a.inline.split[:n:n], a.inline.org[:n:n], a.inline.zero[:n:n]
	} else {
		a.split, a.org, a.zero = make([]int, n), make([]int64, n), make([]int64, n)
	}
	a.firstOld = consecutiveOld(plan, newIndex, a.inline.firstOld[:0])
	return a, nil
}

// consecutiveOld returns the old chunk of the first piece along each axis
// of new chunk index, or nil unless every axis's pieces come from
// consecutive old chunks.
func consecutiveOld(plan *splitaxes.Plan, index []int, dst []int) []int {
	first := slices.Grow(dst[:0], len(index))[:len(index)]
	for d, j := range index {
		f, ok := plan.Axis(d).ConsecutiveOld(j)
		if !ok {
			return nil
		}
		first[d] = f
	}
	return first
}

// axisPieces returns, per axis, the lengths and offsets of the pieces of the
// new chunk (the axis's shared Extents: not to be modified) and its shape
// (Unknown where unknown; 0 along an axis without pieces, which only a
// zero-length axis has).
func axisPieces(plan *splitaxes.Plan, index []int) (lens, offs [][]int64, shape []int64) {
	n := plan.NDim()
	lens, offs, shape = make([][]int64, n), make([][]int64, n), make([]int64, n)
	for d := range n {
		lens[d], offs[d] = plan.Axis(d).Extents(index[d])
		for _, l := range lens[d] {
			if l == Unknown || shape[d] == Unknown {
				shape[d] = Unknown
			} else {
				shape[d] += l
			}
		}
	}
	return lens, offs, shape
}

// axisSegs returns, per run axis, the stretches of each piece of the new
// chunk; nil if the plan has no run axis.
func axisSegs(plan *splitaxes.Plan, index []int) [][][]splitaxes.Seg {
	var segs [][][]splitaxes.Seg
	for d := range plan.NDim() {
		if !plan.Axis(d).IsRun() {
			continue
		}
		if segs == nil {
			segs = make([][][]splitaxes.Seg, plan.NDim())
		}
		for s := range plan.Axis(d).Pieces(index[d]) {
			segs[d] = append(segs[d], s.Segs)
		}
	}
	return segs
}

// spans returns the scatter spans of the piece with the given split index
// and shape, or nil if it is not gathered along any axis.
func (a *Assembler) spans(splitIndex []int, shape []int64) [][]span {
	if a.segs == nil {
		return nil
	}
	segs := make([][]splitaxes.Seg, len(splitIndex))
	for d, k := range splitIndex {
		if a.segs[d] != nil {
			segs[d] = a.segs[d][k]
		}
	}
	return scatterSpans(shape, a.origin(splitIndex), segs)
}

// Unknown is splitaxes.Unknown: a size not known yet.
const Unknown = splitaxes.Unknown

// Place copies piece, the piece with the given split index (one per axis, as
// in splitaxes.NDSplit.SplitIndex), to its place in the new chunk. The first
// piece allocates the chunk's buffer. A refused piece changes nothing; the
// error wraps ErrSplitIndex, ErrDTypeMismatch, ErrShape, ErrDuplicate,
// ErrTooLarge or ErrAlloc. The caller keeps piece's bytes.
func (a *Assembler) Place(splitIndex []int, piece Chunk) error {
	bit, err := a.check(splitIndex, piece)
	if err != nil {
		return fmt.Errorf("new chunk %v, split %v: %w", a.index, splitIndex, err)
	}
	if a.data == nil {
		if err := a.alloc(piece.Shape); err != nil {
			return fmt.Errorf("new chunk %v, split %v: %w", a.index, splitIndex, err)
		}
	}
	if sp := a.spans(splitIndex, piece.Shape); sp != nil {
		copySpans(box{data: a.data, shape: a.shape}, box{data: piece.Data, shape: piece.Shape}, sp, a.dtype.ItemSize())
	} else {
		dst := box{data: a.data, shape: a.shape, origin: a.originTo(a.org, splitIndex)}
		src := box{data: piece.Data, shape: piece.Shape, origin: a.zero}
		copyBox(dst, src, piece.Shape, a.dtype.ItemSize())
	}
	a.placed[bit/64] |= 1 << (bit % 64)
	a.n++
	return nil
}

// PlaceOld places the piece that old chunk oldIndex contributes to the new
// chunk. The error wraps ErrSplitIndex if the old chunk contributes nothing,
// or an error of Place.
func (a *Assembler) PlaceOld(oldIndex []int, piece Chunk) error {
	if idx, ok := a.splitIndexFast(oldIndex); ok {
		return a.Place(idx, piece)
	}
	idx, ok, err := a.plan.SplitIndexTo(a.split, oldIndex, a.index)
	if err == nil && !ok {
		err = ErrSplitIndex
	}
	if err != nil {
		return fmt.Errorf("new chunk %v, old chunk %v: %w", a.index, oldIndex, err)
	}
	a.split = idx
	return a.Place(idx, piece)
}

// splitIndexFast is the split index of old chunk oldIndex's piece when the
// pieces come from consecutive old chunks and oldIndex is one of them;
// false otherwise (plan.SplitIndex then tells why, or finds it).
func (a *Assembler) splitIndexFast(oldIndex []int) ([]int, bool) {
	if a.firstOld == nil || len(oldIndex) != len(a.firstOld) {
		return nil, false
	}
	for d, o := range oldIndex {
		k := o - a.firstOld[d]
		if k < 0 || k >= len(a.lens[d]) {
			return nil, false
		}
		a.split[d] = k
	}
	return a.split, true
}

// check validates a piece and returns its linear split index.
func (a *Assembler) check(splitIndex []int, piece Chunk) (int, error) {
	bit, err := a.linear(splitIndex)
	if err != nil {
		return 0, err
	}
	if piece.DType != a.dtype {
		return 0, fmt.Errorf("piece %q, chunk %q: %w", piece.DType, a.dtype, ErrDTypeMismatch)
	}
	if err := a.checkShape(splitIndex, piece); err != nil {
		return 0, err
	}
	if a.placed[bit/64]&(1<<(bit%64)) != 0 {
		return 0, ErrDuplicate
	}
	return bit, nil
}

// linear checks a split index and returns its position in C order.
func (a *Assembler) linear(splitIndex []int) (int, error) {
	if len(splitIndex) != len(a.lens) {
		return 0, fmt.Errorf("%d axes, want %d: %w", len(splitIndex), len(a.lens), ErrSplitIndex)
	}
	bit := 0
	for d, k := range splitIndex {
		if k < 0 || k >= len(a.lens[d]) {
			return 0, fmt.Errorf("axis %d has %d pieces: %w", d, len(a.lens[d]), ErrSplitIndex)
		}
		bit = bit*len(a.lens[d]) + k
	}
	return bit, nil
}

// checkShape checks the piece's shape against the plan (and, along unknown
// axes, against the size the first piece set) and its byte count.
func (a *Assembler) checkShape(splitIndex []int, piece Chunk) error {
	if len(piece.Shape) != len(a.lens) {
		return fmt.Errorf("piece shape %v for %d axes: %w", piece.Shape, len(a.lens), ErrShape)
	}
	for d, k := range splitIndex {
		want := a.lens[d][k]
		if want == Unknown {
			want = a.shape[d]
		}
		if piece.Shape[d] != want && want != Unknown {
			return fmt.Errorf("piece shape %v, axis %d must be %d: %w", piece.Shape, d, want, ErrShape)
		}
	}
	return piece.Validate()
}

// alloc sets the unknown sizes from the first piece, which spans every
// unknown axis whole, and allocates the buffer at its final size.
func (a *Assembler) alloc(first []int64) error {
	shape := slices.Clone(a.shape)
	for d, s := range shape {
		if s == Unknown {
			shape[d] = first[d]
		}
	}
	n, err := NumBytes(a.dtype, shape)
	if err != nil {
		return err
	}
	buf := a.cfg.alloc(n)
	if len(buf) != n || buf == nil {
		return fmt.Errorf("%d bytes for shape %v, got %d: %w", n, shape, len(buf), ErrAlloc)
	}
	a.shape, a.data = shape, buf
	a.strides = stridesTo(a.inline.stride[:0], shape, a.dtype.ItemSize())
	return nil
}

// origin returns where the piece with the given split index goes.
func (a *Assembler) origin(splitIndex []int) []int64 {
	return a.originTo(nil, splitIndex)
}

// originTo is origin in dst's memory when it has room.
func (a *Assembler) originTo(dst []int64, splitIndex []int) []int64 {
	o := slices.Grow(dst[:0], len(splitIndex))[:len(splitIndex)]
	for d, k := range splitIndex {
		o[d] = a.offs[d][k]
	}
	return o
}

// Placed returns how many pieces have been placed.
func (a *Assembler) Placed() int { return a.n }

// Needed returns how many pieces make up the chunk.
func (a *Assembler) Needed() int { return a.total }

// Complete reports whether every piece has been placed.
func (a *Assembler) Complete() bool { return a.n == a.total }

// Missing yields the split index of every piece not placed yet, in C order.
func (a *Assembler) Missing() iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		for bit := range a.total {
			if a.placed[bit/64]&(1<<(bit%64)) == 0 && !yield(a.unlinear(bit)) {
				return
			}
		}
	}
}

// PlacedOld yields the index of the old chunk behind every placed piece, in
// split-index order: the old chunks that contributed to the chunk so far.
// The yielded slice is reused from one piece to the next (copy it to keep
// it). It takes O(pieces) time and memory for the per-axis lists, computed
// on each call, so that an assembler holds nothing per piece but its bit.
func (a *Assembler) PlacedOld() iter.Seq[[]int] {
	return func(yield func([]int) bool) {
		olds := a.pieceOlds()
		old, split := make([]int, len(a.lens)), make([]int, len(a.lens))
		for bit := range a.total { // split counts through the split indices in C order, as bit does
			if bit > 0 {
				a.advance(split)
			}
			if a.placed[bit/64]&(1<<(bit%64)) == 0 {
				continue
			}
			for d, k := range split {
				if olds[d] == nil {
					old[d] = a.firstOld[d] + k
				} else {
					old[d] = olds[d][k]
				}
			}
			if !yield(old) {
				return
			}
		}
	}
}

// advance steps split to the next split index in C order (the last axis
// fastest).
func (a *Assembler) advance(split []int) {
	for d := len(split) - 1; d >= 0; d-- {
		if split[d]++; split[d] < len(a.lens[d]) {
			return
		}
		split[d] = 0
	}
}

// pieceOlds returns, per axis, the old chunk of each piece along it; nil
// along every axis when they are consecutive from firstOld.
func (a *Assembler) pieceOlds() [][]int {
	olds := make([][]int, len(a.lens))
	if a.firstOld != nil {
		return olds
	}
	for d := range olds {
		for s := range a.plan.Axis(d).Pieces(a.index[d]) {
			olds[d] = append(olds[d], s.OldChunk)
		}
	}
	return olds
}

// unlinear is the inverse of linear.
func (a *Assembler) unlinear(bit int) []int {
	return a.unlinearTo(make([]int, len(a.lens)), bit)
}

// unlinearTo is unlinear into idx (one entry per axis).
func (a *Assembler) unlinearTo(idx []int, bit int) []int {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d] = bit % len(a.lens[d])
		bit /= len(a.lens[d])
	}
	return idx
}

// Chunk returns the assembled chunk, sharing the assembler's buffer. The
// error wraps ErrIncomplete, naming the first missing pieces. A chunk with no
// pieces at all (a zero-length axis) is empty, with size 0 along unknown
// axes.
func (a *Assembler) Chunk() (Chunk, error) {
	if !a.Complete() {
		var first [][]int
		for idx := range a.Missing() {
			if first = append(first, idx); len(first) == 3 {
				break
			}
		}
		return Chunk{}, fmt.Errorf("new chunk %v: %d of %d pieces missing, first %v: %w",
			a.index, a.total-a.n, a.total, first, ErrIncomplete)
	}
	if a.data == nil {
		if err := a.alloc(make([]int64, len(a.shape))); err != nil {
			return Chunk{}, err
		}
	}
	return Chunk{DType: a.dtype, Shape: slices.Clone(a.shape), Data: a.data, Keep: a.cfg.Keep}, nil
}
