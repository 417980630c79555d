package splitaxes

import (
	"fmt"
	"iter"
	"slices"
)

// Slice is a range [Start, Stop) along one axis; Stop is Unknown when the
// range runs to the end of a chunk of unknown size.
type Slice struct {
	Start, Stop int64
}

// OpenEnded reports whether the slice runs to the end of a chunk of unknown
// size.
func (s Slice) OpenEnded() bool { return s.Stop == Unknown }

// NDSplit is one n-d piece: the part of one old chunk that goes to one new
// chunk. Every slice has one entry per axis; the caller owns them.
type NDSplit struct {
	// OldChunk is the index of the old chunk the piece is cut from.
	OldChunk []int
	// NewChunk is the index of the new chunk the piece goes to.
	NewChunk []int
	// SplitIndex is the position of the piece inside NewChunk, per axis.
	SplitIndex []int
	// Slices is the piece's slice of the old chunk, local to it.
	Slices []Slice
	// Offsets is where the piece starts inside the new chunk.
	Offsets []int64
	// Segs is nil unless the plan has run axes; then Segs[d] is the
	// gathered stretches of the piece along run axis d (nil along the
	// others), as in Split.Segs: read only.
	Segs [][]Seg
}

// Plan is the split of every axis of an n-d array. It is immutable.
type Plan struct {
	axes []*Axis
}

// New plans every axis, given the old and new chunk sizes per axis. Errors
// name the axis and wrap ErrNDim or an error of NewAxis.
func New(old, new [][]int64) (*Plan, error) {
	if len(old) != len(new) {
		return nil, fmt.Errorf("old has %d axes, new has %d: %w", len(old), len(new), ErrNDim)
	}
	p := &Plan{axes: make([]*Axis, len(old))}
	for d := range old {
		a, err := NewAxis(old[d], new[d])
		if err != nil {
			return nil, fmt.Errorf("axis %d: %w", d, err)
		}
		p.axes[d] = a
	}
	return p, nil
}

// FromAxes returns the plan of the given axes (from NewAxis or
// NewRunAxis), which it keeps.
func FromAxes(axes []*Axis) *Plan { return &Plan{axes: axes} }

// NDim returns the number of axes.
func (p *Plan) NDim() int { return len(p.axes) }

// Axis returns the plan of axis d (0 <= d < NDim).
func (p *Plan) Axis(d int) *Axis { return p.axes[d] }

// OldGrid returns the number of old chunks along each axis.
func (p *Plan) OldGrid() []int { return p.grid((*Axis).NumOld) }

// NewGrid returns the number of new chunks along each axis.
func (p *Plan) NewGrid() []int { return p.grid((*Axis).NumNew) }

func (p *Plan) grid(n func(*Axis) int) []int {
	g := make([]int, len(p.axes))
	for d, a := range p.axes {
		g[d] = n(a)
	}
	return g
}

// NumSplits returns how many ndsplits old chunk old has: the product of its
// per-axis split counts.
func (p *Plan) NumSplits(old []int) (int, error) {
	return p.count(old, (*Axis).NumOld, (*Axis).NumSplits)
}

// NumPieces returns how many ndsplits make up new chunk new: a receiver
// holding that many distinct pieces has the whole chunk.
func (p *Plan) NumPieces(new []int) (int, error) {
	return p.count(new, (*Axis).NumNew, (*Axis).NumPieces)
}

func (p *Plan) count(idx []int, size func(*Axis) int, n func(*Axis, int) int) (int, error) {
	if err := p.check(idx, size); err != nil {
		return 0, err
	}
	total := 1
	for d, a := range p.axes {
		total *= n(a, idx[d])
	}
	return total, nil
}

// NDSplits lazily yields every ndsplit of old chunk old: the cartesian
// product of its per-axis splits, the last axis varying fastest.
func (p *Plan) NDSplits(old []int) (iter.Seq[NDSplit], error) {
	if err := p.check(old, (*Axis).NumOld); err != nil {
		return nil, err
	}
	return p.product(old, (*Axis).oldRange, (*Axis).split), nil
}

// NDSplitsReused is NDSplits yielding one NDSplit whose slices are
// overwritten from one ndsplit to the next: valid only until the yield
// returns (copy what is kept). A sender that cuts every piece as it is
// yielded allocates nothing per piece.
func (p *Plan) NDSplitsReused(old []int) (iter.Seq[NDSplit], error) {
	if err := p.check(old, (*Axis).NumOld); err != nil {
		return nil, err
	}
	return p.oldSplitsReused(old), nil
}

// Pieces lazily yields every ndsplit that makes up new chunk new, from all
// old chunks, the last axis varying fastest: the inverse view of NDSplits.
func (p *Plan) Pieces(new []int) (iter.Seq[NDSplit], error) {
	if err := p.check(new, (*Axis).NumNew); err != nil {
		return nil, err
	}
	return p.product(new, (*Axis).newRange, (*Axis).newSplit), nil
}

// SplitIndex returns the split index, per axis, of the piece of old chunk
// old inside new chunk new; ok is false if old contributes nothing to new.
func (p *Plan) SplitIndex(old, new []int) (index []int, ok bool, err error) {
	return p.SplitIndexTo(nil, old, new)
}

// SplitIndexTo is SplitIndex writing the index into dst's memory when it
// has room (an assembler placing many pieces reuses one slice): the
// returned index may alias dst.
func (p *Plan) SplitIndexTo(dst, old, new []int) (index []int, ok bool, err error) {
	if err := p.check(old, (*Axis).NumOld); err != nil {
		return nil, false, err
	}
	if err := p.check(new, (*Axis).NumNew); err != nil {
		return nil, false, err
	}
	index = slices.Grow(dst[:0], len(p.axes))[:len(p.axes)]
	for d, a := range p.axes {
		if index[d], ok = a.SplitIndex(old[d], new[d]); !ok {
			return nil, false, nil
		}
	}
	return index, true, nil
}

// check validates a chunk index against the grid given by size.
func (p *Plan) check(idx []int, size func(*Axis) int) error {
	if len(idx) != len(p.axes) {
		return fmt.Errorf("index %v for %d axes: %w", idx, len(p.axes), ErrNDim)
	}
	for d, a := range p.axes {
		if idx[d] < 0 || idx[d] >= size(a) {
			return fmt.Errorf("index %v, axis %d has %d chunks: %w", idx, d, size(a), ErrIndex)
		}
	}
	return nil
}

// product yields the ndsplits of the cartesian product of one piece range
// per axis, with an odometer over piece indices.
func (p *Plan) product(idx []int, rng func(*Axis, int) (int, int), at func(*Axis, int) Split) iter.Seq[NDSplit] {
	los, his := make([]int, len(p.axes)), make([]int, len(p.axes))
	for d, a := range p.axes {
		los[d], his[d] = rng(a, idx[d])
		if los[d] == his[d] {
			return func(func(NDSplit) bool) {}
		}
	}
	return func(yield func(NDSplit) bool) {
		q := append([]int(nil), los...)
		for ok := true; ok; ok = advance(q, los, his) {
			if !yield(p.ndsplit(q, at)) {
				return
			}
		}
	}
}

// oldSplitsReused is the ndsplits of old chunk idx, as product yields
// them with (*Axis).oldRange and (*Axis).split, in one NDSplit rebuilt in
// place for each piece. Only the axes the odometer moved are split again
// (along the last axis, one in a 2-d plan), by a direct call: a sender
// cutting pieces of one element spent a third of its time splitting every
// axis of every piece through a function value. A plan with gathered axes
// (NewRunAxis) rebuilds every axis, as ndsplitTo does.
func (p *Plan) oldSplitsReused(idx []int) iter.Seq[NDSplit] {
	los, his := make([]int, len(p.axes)), make([]int, len(p.axes))
	for d, a := range p.axes {
		los[d], his[d] = a.oldRange(idx[d])
		if los[d] == his[d] {
			return func(func(NDSplit) bool) {}
		}
	}
	gathers := slices.ContainsFunc(p.axes, (*Axis).gathers)
	return func(yield func(NDSplit) bool) {
		q := slices.Clone(los)
		s := p.ndsplit(q, (*Axis).split)
		for yield(s) {
			d := advanceFrom(q, los, his)
			switch {
			case d < 0:
				return
			case gathers:
				p.ndsplitTo(&s, q, (*Axis).split)
			default:
				for ; d < len(q); d++ {
					s.set(d, p.axes[d].split(q[d]))
				}
			}
		}
	}
}

// advance steps the odometer q (last axis fastest) and reports whether it
// has not wrapped around.
func advance(q, los, his []int) bool { return advanceFrom(q, los, his) >= 0 }

// advanceFrom steps the odometer q (last axis fastest) and returns the
// first axis it moved (every later one moved too), or -1 when it wrapped
// around.
func advanceFrom(q, los, his []int) int {
	for d := len(q) - 1; d >= 0; d-- {
		if q[d]++; q[d] < his[d] {
			return d
		}
		q[d] = los[d]
	}
	return -1
}

// ndsplit builds the NDSplit of piece q[d] on every axis d.
func (p *Plan) ndsplit(q []int, at func(*Axis, int) Split) NDSplit {
	n := len(q)
	ints := make([]int, 3*n)
	s := NDSplit{
		OldChunk:   ints[:n:n],
		NewChunk:   ints[n : 2*n : 2*n],
		SplitIndex: ints[2*n:],
		Slices:     make([]Slice, n),
		Offsets:    make([]int64, n),
	}
	p.ndsplitTo(&s, q, at)
	return s
}

// set puts split sp of axis d in s (not its Segs).
func (s *NDSplit) set(d int, sp Split) {
	s.OldChunk[d], s.NewChunk[d], s.SplitIndex[d] = sp.OldChunk, sp.NewChunk, sp.SplitIndex
	s.Slices[d] = Slice{Start: sp.Start, Stop: sp.Stop}
	s.Offsets[d] = sp.Offset
}

// ndsplitTo fills s, whose slices have one entry per axis, with the
// NDSplit of piece q[d] on every axis d.
func (p *Plan) ndsplitTo(s *NDSplit, q []int, at func(*Axis, int) Split) {
	gathered := false
	for d, a := range p.axes {
		sp := at(a, q[d])
		if sp.Segs != nil {
			if s.Segs == nil {
				s.Segs = make([][]Seg, len(q))
			}
			gathered = true
		}
		if s.Segs != nil {
			s.Segs[d] = sp.Segs
		}
		s.set(d, sp)
	}
	if !gathered {
		s.Segs = nil // as NDSplits: nil unless a run axis gathers
	}
}
