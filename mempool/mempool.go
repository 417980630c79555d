package mempool

import (
	"math/bits"
	"sync"
	"testing"
)

// Allocator pools freed buffers by power-of-two capacity. Its zero value is
// ready to use.
type Allocator struct {
	tiers [maxShift + 1]sync.Pool
}

const (
	minShift = 12 // 4 KiB: smaller buffers are cheap to make
	maxShift = 26 // 64 MiB
)

// poisonFreed makes Free overwrite a buffer before pooling it, so that a
// use after Free reads garbage rather than, by luck, the same bytes: on in
// test binaries.
var poisonFreed = testing.Testing()

// Allocate returns size zeroed bytes.
func (p *Allocator) Allocate(size int) []byte {
	shift := max(bits.Len(uint(size-1)), minShift)
	if size <= 0 || shift > maxShift {
		return make([]byte, size)
	}
	if b, ok := p.tiers[shift].Get().(*[]byte); ok {
		buf := (*b)[:size]
		clear(buf)
		return buf
	}
	return make([]byte, size, 1<<shift)
}

// Reallocate returns b resized to size bytes, its contents kept and any
// new bytes zeroed.
func (p *Allocator) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		old := len(b)
		b = b[:size]
		if size > old {
			clear(b[old:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free pools b when its capacity is one of the pool's classes (a buffer
// from Allocate); other buffers are left to the garbage collector.
func (p *Allocator) Free(b []byte) {
	c := cap(b)
	shift := bits.Len(uint(c)) - 1
	if c == 0 || c != 1<<shift || shift < minShift || shift > maxShift {
		return
	}
	b = b[:c]
	if poisonFreed {
		for i := range b {
			b[i] = 0xA5
		}
	}
	p.tiers[shift].Put(&b)
}
