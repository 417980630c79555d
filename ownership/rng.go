package ownership

import (
	"hash/fnv"
	"math/bits"
)

// rng is SplitMix64 seeded from a string and a salt. It is written out here,
// not taken from math/rand, because every node must draw the same sequence
// whatever Go version built it: the sequence is part of the protocol.
type rng struct{ s uint64 }

// newRNG seeds an rng from seed and salt (the purpose and epoch of the draw).
func newRNG(seed string, salt uint64) *rng {
	h := fnv.New64a()
	h.Write([]byte(seed))
	return &rng{s: h.Sum64() ^ (salt * 0xd1b54a32d192ed03)}
}

// next returns the next 64 random bits.
func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform value in [0, n), n > 0 (Lemire's method).
func (r *rng) intn(n int) int {
	bound := uint64(n)
	hi, lo := bits.Mul64(r.next(), bound)
	if lo < bound {
		floor := -bound % bound
		for lo < floor {
			hi, lo = bits.Mul64(r.next(), bound)
		}
	}
	return int(hi)
}

// permutation returns a random order of 0..n-1 (Fisher-Yates).
func (r *rng) permutation(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}
