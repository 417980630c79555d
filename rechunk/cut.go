package rechunk

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// Cut returns a new chunk holding the n-d slice of src given by ranges, one
// per axis (as in splitaxes.NDSplit.Slices; an open-ended slice runs to the end
// of the axis). The error wraps ErrSlice or an error of Chunk.Validate.
func Cut(src Chunk, ranges []splitaxes.Slice) (Chunk, error) {
	data, shape, err := AppendCut(nil, src, ranges)
	if err != nil {
		return Chunk{}, err
	}
	return Chunk{DType: src.DType, Shape: shape, Data: data}, nil
}

// AppendCut appends the bytes of the n-d slice of src given by ranges to dst,
// in C order, and returns the extended buffer and the slice's shape. On error
// dst is returned unchanged.
func AppendCut(dst []byte, src Chunk, ranges []splitaxes.Slice) ([]byte, []int64, error) {
	if err := src.Validate(); err != nil {
		return dst, nil, err
	}
	origin, shape, err := resolve(src.Shape, ranges)
	if err != nil {
		return dst, nil, err
	}
	return appendBox(dst, src, origin, shape, make([]int64, len(shape))), shape, nil
}

// appendBox appends the block of src at origin of the given shape (inside
// src) to dst, in C order; zero is len(shape) zeros.
func appendBox(dst []byte, src Chunk, origin, shape, zero []int64) []byte {
	n := int64(src.DType.ItemSize()) // no larger than src: it cannot overflow
	for _, s := range shape {
		n *= s
	}
	start := len(dst)
	dst = slices.Grow(dst, int(n))[:start+int(n)]
	out := box{data: dst[start:], shape: shape, origin: zero}
	copyBox(out, box{data: src.Data, shape: src.Shape, origin: origin}, shape, src.DType.ItemSize())
	return dst
}

// resolve turns ranges into the origin and shape of a block of a chunk of
// the given shape, checking bounds.
func resolve(shape []int64, ranges []splitaxes.Slice) (origin, count []int64, err error) {
	return resolveTo(nil, nil, shape, ranges)
}

// resolveTo is resolve with origin and count in the memory of o and c when
// they have room.
func resolveTo(o, c, shape []int64, ranges []splitaxes.Slice) (origin, count []int64, err error) {
	if len(ranges) != len(shape) {
		return nil, nil, fmt.Errorf("%d slices for shape %v: %w", len(ranges), shape, ErrSlice)
	}
	origin, count = slices.Grow(o[:0], len(shape))[:len(shape)], slices.Grow(c[:0], len(shape))[:len(shape)]
	for d, s := range ranges {
		stop := s.Stop
		if s.OpenEnded() {
			stop = shape[d]
		}
		if s.Start < 0 || s.Start > stop || stop > shape[d] {
			return nil, nil, fmt.Errorf("slice %v of axis %d of shape %v: %w", s, d, shape, ErrSlice)
		}
		origin[d], count[d] = s.Start, stop-s.Start
	}
	return origin, count, nil
}
