package zarr

import (
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
)

// eachRun calls fn for every contiguous run of bytes of the region
// [0, trim) of a C-order array of shape full with elements of item bytes:
// fullOff is the run's offset in the full array, trimOff its offset in the
// region's own C-order bytes, n its length. Trailing axes the region covers
// whole are merged with the first partial one, so a region of whole rows is
// one run.
func eachRun(full, trim []int64, item int, fn func(fullOff, trimOff, n int)) {
	if slices.Contains(trim, 0) {
		return
	}
	outer, run := len(trim), int64(item)
	for outer > 0 {
		outer--
		run *= trim[outer]
		if trim[outer] != full[outer] {
			break
		}
	}
	stride := rechunk.Strides(full, item)
	idx := make([]int64, outer)
	fullOff, trimOff := int64(0), int64(0)
	for {
		fn(int(fullOff), int(trimOff), int(run))
		trimOff += run
		d := outer - 1
		for ; d >= 0; d-- {
			idx[d]++
			fullOff += stride[d]
			if idx[d] < trim[d] {
				break
			}
			fullOff -= idx[d] * stride[d]
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// tile fills buf with copies of one element's bytes.
func tile(buf, elem []byte) {
	if len(buf) == 0 {
		return
	}
	if allZero(elem) {
		clear(buf)
		return
	}
	n := copy(buf, elem)
	for n < len(buf) {
		n += copy(buf[n:], buf[:n])
	}
}

// allZero reports whether every byte of b is 0.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// pad returns the full chunk (shape full) holding data (shape trim) at its
// origin and fill everywhere else. If trim == full it returns data itself.
func pad(data []byte, full, trim []int64, fill []byte, fullBytes int) []byte {
	if slices.Equal(full, trim) {
		return data
	}
	out := make([]byte, fullBytes)
	tile(out, fill)
	eachRun(full, trim, len(fill), func(fo, to, n int) {
		copy(out[fo:fo+n], data[to:to+n])
	})
	return out
}

// trimTo returns the region [0, trim) of the full chunk data as its own
// C-order bytes. If trim == full it returns data itself.
func trimTo(data []byte, full, trim []int64, item, trimBytes int) []byte {
	if slices.Equal(full, trim) {
		return data
	}
	out := make([]byte, trimBytes)
	eachRun(full, trim, item, func(fo, to, n int) {
		copy(out[to:to+n], data[fo:fo+n])
	})
	return out
}
