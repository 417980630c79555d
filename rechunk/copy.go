package rechunk

import "slices"

// box is a block of count elements per axis, at origin inside a C-order
// array of the given shape held in data.
type box struct {
	data   []byte
	shape  []int64
	origin []int64
}

// copyBox copies the block of count elements per axis from src to dst
// (count fits inside both at their origins). Trailing axes that both arrays
// hold whole, plus the first partial axis, form one contiguous run; an
// odometer over the remaining outer axes copies one run at a time.
func copyBox(dst, src box, count []int64, item int) {
	for _, c := range count {
		if c == 0 {
			return
		}
	}
	k, run := runAxes(dst.shape, src.shape, count, int64(item))
	var dsb, ssb [stackDims]int64 // no allocation per piece below stackDims axes
	ds, ss := stridesTo(dsb[:0], dst.shape, item), stridesTo(ssb[:0], src.shape, item)
	doff, soff := offset(dst.origin, ds), offset(src.origin, ss)
	if k < 0 {
		copy(dst.data[doff:doff+run], src.data[soff:soff+run])
		return
	}
	copyRuns(dst.data, src.data, doff, soff, ds[:k], ss[:k], count[:k], run)
}

// runAxes returns the innermost axis k that is not held whole by both
// arrays (-1 if none) and the byte length of a run: count[k] times the
// trailing whole axes.
func runAxes(dshape, sshape, count []int64, item int64) (k int, run int64) {
	run = item
	for k = len(count) - 1; k >= 0; k-- {
		if count[k] != dshape[k] || count[k] != sshape[k] {
			return k, run * count[k]
		}
		run *= count[k]
	}
	return -1, run
}

// Strides returns the byte stride of each axis of a C-order array of shape
// with item bytes per element.
func Strides(shape []int64, item int) []int64 {
	return stridesTo(nil, shape, item)
}

// stackDims is the number of axes up to which the copies keep their index
// arithmetic in arrays on the stack.
const stackDims = 8

// stridesTo is Strides in dst's memory when it has room.
func stridesTo(dst, shape []int64, item int) []int64 {
	s := slices.Grow(dst[:0], len(shape))[:len(shape)]
	acc := int64(item)
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = acc
		acc *= shape[d]
	}
	return s
}

// offset returns the byte offset of an element index.
func offset(idx, stride []int64) int64 {
	var off int64
	for d := range idx {
		off += idx[d] * stride[d]
	}
	return off
}

// copyRuns copies one run of run bytes for every index of the outer axes
// (counts count, byte strides ds and ss), starting at doff and soff.
func copyRuns(dst, src []byte, doff, soff int64, ds, ss, count []int64, run int64) {
	var ib [stackDims]int64
	idx := ib[:0]
	idx = slices.Grow(idx, len(count))[:len(count)]
	for {
		copy(dst[doff:doff+run], src[soff:soff+run])
		d := len(idx) - 1
		for ; d >= 0; d-- {
			doff, soff = doff+ds[d], soff+ss[d]
			if idx[d]++; idx[d] < count[d] {
				break
			}
			doff, soff = doff-count[d]*ds[d], soff-count[d]*ss[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
