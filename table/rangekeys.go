package table

import (
	"math"
	"math/bits"
)

// Order keys map int64, uint64 and float64 values to uint64 so that the
// keys compare as the values do: one branch-free search (placeKeys) then
// serves every fixed-width range column.

// signedKey is v's order key: the sign bit flipped.
func signedKey(v int64) uint64 { return uint64(v) ^ 1<<63 }

// floatKey is v's order key: -0 sorts with +0 (they compare equal), NaN
// after every finite value (divisions are finite), and otherwise the IEEE
// bits with every bit of a negative flipped and the sign bit of a positive.
func floatKey(v float64) uint64 {
	if v != v {
		return math.MaxUint64
	}
	if v == 0 {
		v = 0 // -0 becomes +0
	}
	b := math.Float64bits(v)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// orderKeys returns the order keys of vals.
func orderKeys[T any](vals []T, key func(T) uint64) []uint64 {
	out := make([]uint64, len(vals))
	for i, v := range vals {
		out[i] = key(v)
	}
	return out
}

// placeEach sets out[i] to the number of divisions (order keys, ascending)
// <= the order key of vals[i], a block of keys at a time.
func placeEach[T any](vals []T, key func(T) uint64, div *keyIndex, out []uint32) {
	var buf [256]uint64
	for len(vals) > 0 {
		n := min(len(vals), len(buf))
		for i, v := range vals[:n] {
			buf[i] = key(v)
		}
		placeKeys(div, buf[:n], out[:n])
		vals, out = vals[n:], out[n:]
	}
}

// placeKeys sets out[i] to the number of divisions <= keys[i]: by x's
// table when it has one, else by searching the divisions.
func placeKeys(x *keyIndex, keys []uint64, out []uint32) {
	if x.first == nil {
		searchKeys(x.div, keys, out)
		return
	}
	for i, k := range keys {
		out[i] = x.place(k)
	}
}

// minIndexed is the fewest divisions a keyIndex builds a table for: below
// it the branch-free search of a few steps is faster (1M keys among 3
// divisions: 11 ms searched, 16-17 ms through a table). maxBucketBits
// bounds the table (2^16 buckets, 256 KiB: more than 16K partitions share
// buckets, and a bucket of several divisions is searched).
const (
	minIndexed    = 16
	maxBucketBits = 16
)

// keyIndex is the divisions of a fixed-width range column (order keys,
// ascending) with a table that narrows each key's search. The keys from
// the first division on are cut into 2^b buckets of equal width (about 4
// per division, at most 2^maxBucketBits); first[j] is the number of
// divisions below bucket j. A key's place is first[j] plus the divisions
// of its bucket that are <= it: none or one, for divisions that spread as
// the keys do (quantiles of a sample of them), so most keys take a shift,
// two loads from a table (16 KiB for 1000 partitions: it stays in the L1
// cache) and one comparison, where a search takes ten dependent steps.
type keyIndex struct {
	div   []uint64
	first []uint32 // 2^b+2 entries; nil: search div alone
	base  uint64   // div[0]
	shift uint
}

// newKeyIndex indexes div (ascending order keys); it keeps div.
func newKeyIndex(div []uint64) *keyIndex {
	x := &keyIndex{div: div}
	if len(div) < minIndexed {
		return x
	}
	b := min(bits.Len(uint(4*len(div))), maxBucketBits)
	x.base = div[0]
	span := div[len(div)-1] - div[0]
	x.shift = uint(max(0, bits.Len64(span)-b))
	buckets := 1 << b
	x.first = make([]uint32, buckets+2)
	i := 0
	for j := range buckets + 1 {
		off := uint64(j) << x.shift
		if off>>x.shift != uint64(j) || off > span { // bucket j starts past the last division (or 2^64)
			i = len(div)
		}
		for i < len(div) && div[i]-x.base < off {
			i++
		}
		x.first[j] = uint32(i)
	}
	x.first[buckets+1] = uint32(len(div))
	return x
}

// place returns the number of divisions <= k. A key below the first
// division takes bucket 0 (whose divisions are all above it), one past the
// last bucket the entry after it (no division left).
func (x *keyIndex) place(k uint64) uint32 {
	d, borrow := bits.Sub64(k, x.base, 0)
	j := min(d>>x.shift&(borrow-1), uint64(len(x.first)-2))
	lo, hi := x.first[j], x.first[j+1]
	if hi-lo > 1 {
		return lo + upper(x.div[lo:hi], k)
	}
	_, below := bits.Sub64(k, x.div[min(int(lo), len(x.div)-1)], 0) // 1 when k is below the candidate
	return lo + (hi-lo)&uint32(below^1)
}

// searchKeys sets out[i] to the number of divisions <= keys[i]. Each search
// halves a window whose first division is the last one <= the key seen so
// far; the comparison's borrow masks the step, so there is no branch to
// mispredict (keys fall between divisions at random: a branch would miss
// half the time, at every level), and four searches run interleaved, so
// their loads overlap. 1000 partitions: ~13 ns a key against ~47 for a
// binary search with branches.
func searchKeys(div, keys []uint64, out []uint32) {
	if len(div) == 0 {
		clear(out)
		return
	}
	i := 0
	for ; i+4 <= len(keys); i += 4 {
		k0, k1, k2, k3 := keys[i], keys[i+1], keys[i+2], keys[i+3]
		b0, b1, b2, b3 := 0, 0, 0, 0
		for n := len(div); n > 1; {
			half := n >> 1
			b0 += half & notBelow(k0, div[b0+half])
			b1 += half & notBelow(k1, div[b1+half])
			b2 += half & notBelow(k2, div[b2+half])
			b3 += half & notBelow(k3, div[b3+half])
			n -= half
		}
		out[i], out[i+1], out[i+2], out[i+3] = lastStep(div, b0, k0), lastStep(div, b1, k1), lastStep(div, b2, k2), lastStep(div, b3, k3)
	}
	for ; i < len(keys); i++ {
		b := 0
		for n := len(div); n > 1; {
			half := n >> 1
			b += half & notBelow(keys[i], div[b+half])
			n -= half
		}
		out[i] = lastStep(div, b, keys[i])
	}
}

// notBelow is all ones when k >= d, else 0, without a branch.
func notBelow(k, d uint64) int {
	_, borrow := bits.Sub64(k, d, 0) // 1 when k < d
	return int(borrow) - 1
}

// lastStep is the count of divisions <= k given the window start b.
func lastStep(div []uint64, b int, k uint64) uint32 {
	_, borrow := bits.Sub64(k, div[b], 0)
	return uint32(b + 1 - int(borrow))
}
