package rechunk

import "encoding/binary"

// PlaceOldWire is PlaceOldOnce for a piece in its wire form b (as
// AppendPiece wrote it; DecodePiece reads it). A receiver placing pieces of
// one element spent more on decoding the piece into a Chunk, and on the
// general copy of an n-d block, than on the element: a piece that lands as
// one contiguous run of the chunk, in a place not filled before, is checked
// against its header and copied straight from b. Any other piece (a
// duplicate, one gathered along a run axis, one whose header does not
// match) takes the general path, which also gives the errors.
func (a *Assembler) PlaceOldWire(oldIndex []int, b []byte) (placed bool, err error) {
	if split, ok := a.splitIndexFast(oldIndex); ok && a.placeContiguous(split, b) {
		return true, nil
	}
	c, err := DecodePieceTo(a.inline.shape[:0], b, a.dtype)
	if err != nil {
		return false, err
	}
	return a.PlaceOldOnce(oldIndex, c)
}

// placeContiguous places the wire piece b with the given split index if
// the chunk's buffer exists, the place is empty, b's header gives the
// piece's expected shape, b holds exactly its bytes, and the piece is one
// contiguous run of the chunk: every axis after its first one longer than
// 1 spans the chunk whole. It reports whether it placed the piece; when it
// did not, nothing changed.
func (a *Assembler) placeContiguous(split []int, b []byte) bool {
	if a.data == nil || a.segs != nil || len(a.strides) != len(split) {
		return false
	}
	bit := 0
	for d, k := range split {
		bit = bit*len(a.lens[d]) + k
	}
	if a.placed[bit/64]&(1<<(bit%64)) != 0 {
		return false
	}
	ndim, n := binary.Uvarint(b)
	if n <= 0 || ndim != uint64(len(split)) {
		return false
	}
	b = b[n:]
	elems, off := int64(1), int64(0)
	outer := true // no axis longer than 1 yet
	for d, k := range split {
		v, n := binary.Uvarint(b)
		want := a.lens[d][k]
		if n <= 0 || want == Unknown || v != uint64(want) || (!outer && want != a.shape[d]) {
			return false
		}
		outer = outer && want == 1
		b, elems, off = b[n:], elems*want, off+a.offs[d][k]*a.strides[d]
	}
	if int64(len(b)) != elems*int64(a.dtype.ItemSize()) || off+int64(len(b)) > int64(len(a.data)) {
		return false
	}
	copy(a.data[off:], b)
	a.placed[bit/64] |= 1 << (bit % 64)
	a.n++
	return true
}
