package splitaxes

// sweep computes the pieces of a fully known axis, given the chunk
// boundaries of old and new (equal totals). It walks both lists twice: once
// to count the pieces, once to fill an array of exactly that size.
//
// The pieces come out ordered by position, and pieces at the same position
// (empty ones) by new chunk: that order is both (old chunk, Start) order and
// (new chunk, split index) order.
func sweep(oldStart, newStart []int64) []piece {
	n := 0
	walk(oldStart, newStart, func(int32, int32, int64) { n++ })
	ps := make([]piece, 0, n)
	walk(oldStart, newStart, func(old, new int32, pos int64) {
		ps = append(ps, piece{old: old, new: new, pos: pos})
	})
	return ps
}

// walk emits every piece, in order, as (old chunk, new chunk, position).
func walk(oldStart, newStart []int64, emit func(old, new int32, pos int64)) {
	c := newCursor(oldStart)
	for j := range len(newStart) - 1 {
		lo, hi := newStart[j], newStart[j+1]
		if lo == hi {
			c.empty(int32(j), lo, emit)
			continue
		}
		for pos := lo; pos < hi; pos = c.start[c.i+1] {
			c.seek(pos) // totals are equal: an old chunk contains pos
			emit(int32(c.i), int32(j), pos)
		}
	}
}

// cursor walks the old chunks: chunk i spans [start[i], start[i+1]).
type cursor struct {
	start []int64
	i     int
	// last is the index of the last non-empty old chunk, -1 if none: zero-size
	// new chunks at the total go to its end.
	last int
}

func newCursor(start []int64) *cursor {
	c := &cursor{start: start, last: len(start) - 2}
	for c.last >= 0 && start[c.last] == start[c.last+1] {
		c.last--
	}
	return c
}

// seek advances to the non-empty old chunk that contains pos and reports
// whether there is one.
func (c *cursor) seek(pos int64) bool {
	n := len(c.start) - 1
	for c.i < n && c.start[c.i+1] <= pos {
		c.i++
	}
	return c.i < n
}

// empty emits the one empty piece of the zero-size new chunk j at pos, if the
// axis has a non-empty old chunk.
func (c *cursor) empty(j int32, pos int64, emit func(old, new int32, pos int64)) {
	switch {
	case c.seek(pos):
		emit(int32(c.i), j, pos)
	case c.last >= 0:
		emit(int32(c.last), j, pos) // pos is the total, the end of chunk last
	}
}
