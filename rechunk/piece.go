package rechunk

import (
	"encoding/binary"
	"fmt"

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
	dst = appendShape(dst, pieceShape(ranges, src.Shape))
	dst, _, err := AppendCut(dst, src, ranges)
	return dst, err
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
	ndim, n := binary.Uvarint(b)
	if n <= 0 || ndim > maxPieceDims {
		return Chunk{}, fmt.Errorf("%w: piece header", ErrBadPiece)
	}
	b = b[n:]
	shape := make([]int64, ndim)
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
