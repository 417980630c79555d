package table

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// The constants of the partitioning hash (see the package documentation).
// Changing any of them, or any function in this file, changes where rows go:
// the golden vectors in testdata/hash_golden.json pin them.
const (
	hashSeed = 0x9E3779B97F4A7C15 // initial state, also the column multiplier
	fmixK1   = 0xFF51AFD7ED558CCD
	fmixK2   = 0xC4CEB9FE1A85EC53
	// canonNaN is the canonical bit pattern of every NaN.
	canonNaN = 0x7FF8000000000000
)

// fmix64 is the 64-bit finaliser of MurmurHash3: a bijection with full
// avalanche.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= fmixK1
	x ^= x >> 33
	x *= fmixK2
	x ^= x >> 33
	return x
}

// hashWord is hashBytes of the 8-byte little-endian form of w, inlined for
// fixed-width values.
func hashWord(w uint64) uint64 {
	return fmix64(hashSeed ^ 8 ^ w)
}

// hashBytes hashes a canonical byte string: the state starts at
// hashSeed XOR len(b); each 8-byte little-endian word of b (the last one
// zero-padded) is XORed in and the state replaced by fmix64 of it; an empty
// string gives fmix64(hashSeed).
func hashBytes(b []byte) uint64 {
	h := uint64(hashSeed) ^ uint64(len(b))
	if len(b) == 0 {
		return fmix64(h)
	}
	for len(b) >= 8 {
		h = fmix64(h ^ binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if len(b) > 0 {
		var tail [8]byte
		copy(tail[:], b)
		h = fmix64(h ^ binary.LittleEndian.Uint64(tail[:]))
	}
	return h
}

// hashCombine folds the hash of the next key column into a row's hash.
func hashCombine(acc, h uint64) uint64 {
	return fmix64(acc*hashSeed + h)
}

// reduce maps a 64-bit hash to a partition in [0, p): floor(h * p / 2^64).
func reduce(h uint64, p uint64) uint32 {
	hi, _ := bits.Mul64(h, p)
	return uint32(hi)
}

// canonFloat returns the canonical 8-byte form of a float: the IEEE-754 bits
// of its float64 value, with -0.0 as 0.0 and every NaN as canonNaN.
func canonFloat(v float64) uint64 {
	switch {
	case v == 0:
		return 0
	case v != v:
		return canonNaN
	}
	return math.Float64bits(v)
}

// signed, unsigned and offset constrain the generic column loops.
type (
	signed interface {
		~int8 | ~int16 | ~int32 | ~int64
	}
	unsigned interface {
		~uint8 | ~uint16 | ~uint32 | ~uint64
	}
	floating interface{ ~float32 | ~float64 }
	offset   interface{ ~int32 | ~int64 }
)

// store writes h into acc[i], or combines it with acc[i] when combine is
// set.
func store(acc []uint64, i int, h uint64, combine bool) {
	if combine {
		acc[i] = hashCombine(acc[i], h)
	} else {
		acc[i] = h
	}
}

// hashSigned hashes signed integers widened to int64.
func hashSigned[T signed](vals []T, acc []uint64, combine bool) {
	acc = acc[:len(vals)]
	if !combine {
		for i, v := range vals {
			acc[i] = hashWord(uint64(int64(v)))
		}
		return
	}
	for i, v := range vals {
		acc[i] = hashCombine(acc[i], hashWord(uint64(int64(v))))
	}
}

// hashUnsigned hashes unsigned integers widened to uint64.
func hashUnsigned[T unsigned](vals []T, acc []uint64, combine bool) {
	acc = acc[:len(vals)]
	if !combine {
		for i, v := range vals {
			acc[i] = hashWord(uint64(v))
		}
		return
	}
	for i, v := range vals {
		acc[i] = hashCombine(acc[i], hashWord(uint64(v)))
	}
}

// hashFloat hashes floats widened to float64 in canonical form.
func hashFloat[T floating](vals []T, acc []uint64, combine bool) {
	acc = acc[:len(vals)]
	for i, v := range vals {
		store(acc, i, hashWord(canonFloat(float64(v))), combine)
	}
}

// hashVar hashes variable-width values given their offsets (len(offs) ==
// rows+1) and data.
func hashVar[O offset](offs []O, data []byte, acc []uint64, combine bool) {
	n := len(offs) - 1
	acc = acc[:n]
	for i := range n {
		store(acc, i, hashBytes(data[offs[i]:offs[i+1]]), combine)
	}
}
