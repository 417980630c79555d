package rechunk

import (
	"bytes"
	"errors"
	"fmt"
)

// PlaceOldOnce places the piece that old chunk oldIndex contributes, unless
// that place was filled before: then it only checks that piece holds the
// same bytes (a resent or replayed piece) and places nothing. placed reports
// whether it placed the piece. A piece whose bytes differ from the placed
// one is refused with ErrPieceDiffers: two attempts of one input task gave
// different data, which no rechunk may paper over. Other errors are
// PlaceOld's.
func (a *Assembler) PlaceOldOnce(oldIndex []int, piece Chunk) (placed bool, err error) {
	err = a.PlaceOld(oldIndex, piece)
	if !errors.Is(err, ErrDuplicate) {
		return err == nil, err
	}
	idx, _, err := a.plan.SplitIndex(oldIndex, a.index)
	if err != nil {
		return false, err
	}
	if !bytes.Equal(a.region(idx, piece.Shape), piece.Data) {
		return false, fmt.Errorf("new chunk %v, old chunk %v: %w", a.index, oldIndex, ErrPieceDiffers)
	}
	return false, nil
}

// region copies out the bytes of the placed piece with the given split index
// and shape.
func (a *Assembler) region(splitIndex []int, shape []int64) []byte {
	n, _ := NumBytes(a.dtype, shape)
	out := make([]byte, n)
	if sp := a.spans(splitIndex, shape); sp != nil {
		copySpans(box{data: out, shape: shape}, box{data: a.data, shape: a.shape}, flip(sp), a.dtype.ItemSize())
		return out
	}
	src := box{data: a.data, shape: a.shape, origin: a.origin(splitIndex)}
	dst := box{data: out, shape: shape, origin: make([]int64, len(shape))}
	copyBox(dst, src, shape, a.dtype.ItemSize())
	return out
}
