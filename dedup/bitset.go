package dedup

import "math/bits"

// Bitset is a compact, growable set of non-negative ints: one bit per
// possible member, about n/8 bytes for members below n. The zero value is
// an empty set ready to use. A Bitset is not safe for concurrent mutation.
type Bitset struct {
	w []uint64
}

// NewBitset returns an empty set with room for members 0..n-1 without
// growing.
func NewBitset(n int) *Bitset {
	return &Bitset{w: make([]uint64, 0, wordsFor(n))}
}

// BitsetOf returns a set holding the given members (negatives are ignored).
func BitsetOf(members ...int) *Bitset {
	b := &Bitset{}
	for _, i := range members {
		b.Set(i)
	}
	return b
}

// Set adds i to the set, growing it as needed. A negative i is ignored.
func (b *Bitset) Set(i int) {
	if i < 0 {
		return
	}
	if n := i/64 + 1; n > len(b.w) {
		b.grow(n)
	}
	b.w[i/64] |= 1 << (i % 64)
}

// Clear removes i from the set.
func (b *Bitset) Clear(i int) {
	if i >= 0 && i/64 < len(b.w) {
		b.w[i/64] &^= 1 << (i % 64)
	}
}

// Has reports whether i is in the set.
func (b *Bitset) Has(i int) bool {
	return b != nil && i >= 0 && i/64 < len(b.w) && b.w[i/64]&(1<<(i%64)) != 0
}

// Count returns the number of members.
func (b *Bitset) Count() int {
	if b == nil {
		return 0
	}
	n := 0
	for _, w := range b.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// Len returns one more than the largest member, or 0 for an empty set: the
// number of bits the set spans.
func (b *Bitset) Len() int {
	if b == nil {
		return 0
	}
	for i := len(b.w) - 1; i >= 0; i-- {
		if b.w[i] != 0 {
			return i*64 + bits.Len64(b.w[i])
		}
	}
	return 0
}

// Empty reports whether the set has no members.
func (b *Bitset) Empty() bool { return b.Len() == 0 }

// AndNot removes every member of o from b (b = b \ o). A nil o removes
// nothing.
func (b *Bitset) AndNot(o *Bitset) {
	if o == nil {
		return
	}
	for i := range min(len(b.w), len(o.w)) {
		b.w[i] &^= o.w[i]
	}
}

// Or adds every member of o to b (b = b ∪ o). A nil o adds nothing.
func (b *Bitset) Or(o *Bitset) {
	if o == nil {
		return
	}
	if n := len(o.w); n > len(b.w) {
		b.grow(n)
	}
	for i, w := range o.w {
		b.w[i] |= w
	}
}

// Clone returns a copy of b that shares no memory with it, trimmed to the
// words it needs. Clone of nil is an empty set.
func (b *Bitset) Clone() *Bitset {
	c := b.clone()
	return &c
}

// clone is Clone returning a value.
func (b *Bitset) clone() Bitset {
	n := wordsFor(b.Len())
	if n == 0 {
		return Bitset{}
	}
	return Bitset{w: append([]uint64(nil), b.w[:n]...)}
}

// Equal reports whether b and o have the same members.
func (b *Bitset) Equal(o *Bitset) bool {
	n := wordsFor(b.Len())
	if n != wordsFor(o.Len()) {
		return false
	}
	for i := range n {
		if b.w[i] != o.w[i] {
			return false
		}
	}
	return true
}

// ForEach calls fn with each member in increasing order until fn returns
// false. fn must not change b.
func (b *Bitset) ForEach(fn func(int) bool) {
	if b == nil {
		return
	}
	for i, w := range b.w {
		for w != 0 {
			if !fn(i*64 + bits.TrailingZeros64(w)) {
				return
			}
			w &= w - 1
		}
	}
}

// Bytes returns the approximate memory b uses, in bytes.
func (b *Bitset) Bytes() int {
	if b == nil {
		return 0
	}
	return bitsetHeader + 8*cap(b.w)
}

// bitsetHeader is the size of a Bitset value: one slice header.
const bitsetHeader = 24

// grow extends b to n words, zero-filled.
func (b *Bitset) grow(n int) {
	if n <= cap(b.w) {
		b.w = b.w[:n]
		return
	}
	w := make([]uint64, n, max(n, 2*cap(b.w)))
	copy(w, b.w)
	b.w = w
}

// wordsFor returns the number of 64-bit words holding n bits.
func wordsFor(n int) int { return (n + 63) / 64 }
