package rechunk

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// Pieces on the wire and in the spill store are self-describing: the
// ndsplit's shape (uvarint ndim, then one uvarint extent per axis) followed
// by its C-order bytes. The sender appends them with AppendPiece; the
// receiver checks and reads them with DecodePiece.

// maxPieceDims bounds the number of axes a decoded piece may claim.
const maxPieceDims = 32

// AppendPiece appends the piece of src selected by ranges (an ndsplit's
// slices, open-ended ones running to the chunk's end) to dst: its shape,
// then its bytes cut straight from src.
func AppendPiece(dst []byte, src Chunk, ranges []splitaxes.Slice) ([]byte, error) {
	if err := src.Validate(); err != nil {
		return dst, err
	}
	if b, ok := appendContiguous(dst, src, ranges); ok {
		return b, nil
	}
	var ob, cb, zb [stackDims]int64 // no allocation per piece below stackDims axes
	origin, shape, err := resolveTo(ob[:0], cb[:0], src.Shape, ranges)
	if err != nil {
		return dst, err
	}
	dst = appendShape(dst, shape)
	return appendBox(dst, src, origin, shape, zb[:len(shape):len(shape)]), nil
}

// appendContiguous is AppendPiece (after src.Validate) for a piece that is
// one contiguous run of src: every axis after its first one longer than 1
// spans src whole. A sender cutting pieces of one element spent more on
// the general copy of an n-d block than on the element. It reports false,
// with dst unchanged, for any other piece, one out of bounds, or more than
// stackDims axes.
func appendContiguous(dst []byte, src Chunk, ranges []splitaxes.Slice) ([]byte, bool) {
	nd := len(src.Shape)
	if len(ranges) != nd || nd > stackDims {
		return dst, false
	}
	var shape [stackDims]int64
	off, stride, run := int64(0), int64(src.DType.ItemSize()), int64(src.DType.ItemSize())
	whole := true // every axis after this one spans src whole
	for d := nd - 1; d >= 0; d-- {
		r := ranges[d]
		stop := r.Stop
		if r.OpenEnded() {
			stop = src.Shape[d]
		}
		if r.Start < 0 || r.Start > stop || stop > src.Shape[d] {
			return dst, false
		}
		n := stop - r.Start
		if n != 1 && !whole {
			return dst, false // an axis longer than 1 before a partial one
		}
		shape[d], off, run = n, off+r.Start*stride, run*n
		whole = whole && n == src.Shape[d]
		stride *= src.Shape[d]
	}
	dst = appendShape(dst, shape[:nd])
	return append(dst, src.Data[off:off+run]...), true
}

// pieceShape is the shape of an ndsplit of a chunk of shape.
func pieceShape(sl []splitaxes.Slice, shape []int64) []int64 {
	out := make([]int64, len(sl))
	for a, r := range sl {
		stop := r.Stop
		if stop == splitaxes.Unknown {
			stop = shape[a]
		}
		out[a] = stop - r.Start
	}
	return out
}

func appendShape(b []byte, shape []int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(shape)))
	for _, n := range shape {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

// DecodePiece splits a piece into its shape and bytes, checking the byte
// length against the shape and dt. The chunk's data aliases b.
func DecodePiece(b []byte, dt DType) (Chunk, error) {
	return DecodePieceTo(nil, b, dt)
}

// DecodePieceTo is DecodePiece with the shape in shape's memory when it has
// room (a receiver decoding many pieces of one message gives them slices of
// one array): the chunk's shape may alias it.
func DecodePieceTo(shape []int64, b []byte, dt DType) (Chunk, error) {
	ndim, n := binary.Uvarint(b)
	if n <= 0 || ndim > maxPieceDims {
		return Chunk{}, fmt.Errorf("%w: piece header", ErrBadPiece)
	}
	b = b[n:]
	shape = slices.Grow(shape[:0], int(ndim))[:ndim]
	elems := int64(1)
	for a := range shape {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<62 || (v != 0 && elems > (1<<62)/int64(v)) {
			return Chunk{}, fmt.Errorf("%w: piece shape", ErrBadPiece)
		}
		shape[a], elems, b = int64(v), elems*int64(v), b[n:]
	}
	if want := elems * int64(dt.ItemSize()); int64(len(b)) != want {
		return Chunk{}, fmt.Errorf("%w: piece of shape %v has %d bytes, want %d", ErrBadPiece, shape, len(b), want)
	}
	return Chunk{DType: dt, Shape: shape, Data: b}, nil
}
