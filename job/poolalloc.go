package job

import (
	"math/bits"
	"sync"
	"testing"
)

// poolAlloc is a memory.Allocator that keeps freed buffers, by power-of-two
// capacity, for the next Allocate of their class. The demo's input
// generator allocates one task's columns per put and frees them when the
// put is done: pooled, the next task's columns land in memory that is
// mapped and likely still in cache, instead of new heap memory that must be
// cleared, and on a virtual machine first touched, and later collected.
// Allocate returns zeroed bytes, as memory.GoAllocator does.
//
// Only the one who allocated may Free, once, when nothing uses the bytes
// any more: an Arrow record's buffers are freed on its last Release.
type poolAlloc struct {
	tiers [poolMaxShift + 1]sync.Pool
}

const (
	poolMinShift = 12 // 4 KiB: smaller buffers are cheap to make
	poolMaxShift = 26 // 64 MiB
)

// poisonFreed makes Free overwrite a buffer before pooling it, so that a
// use after Free reads garbage (which the demo's checksums catch) rather
// than, by luck, the same bytes: on in test binaries.
var poisonFreed = testing.Testing()

// Allocate returns size zeroed bytes.
func (p *poolAlloc) Allocate(size int) []byte {
	shift := max(bits.Len(uint(size-1)), poolMinShift)
	if size <= 0 || shift > poolMaxShift {
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
func (p *poolAlloc) Reallocate(size int, b []byte) []byte {
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

// Free pools b when its capacity is a class of the pool (buffers from
// Allocate); other buffers are left to the garbage collector.
func (p *poolAlloc) Free(b []byte) {
	c := cap(b)
	shift := bits.Len(uint(c)) - 1
	if c == 0 || c != 1<<shift || shift < poolMinShift || shift > poolMaxShift {
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

// genPool is the allocator of the demo's generated inputs.
var genPool = new(poolAlloc)
