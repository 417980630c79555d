package mempool

import (
	"math/bits"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Pool is a memory.Allocator that keeps freed buffers for the next
// requests of their size, instead of new Go allocations, which this machine
// pays for in clearing, collection and, once the runtime has returned the
// pages, faulting them in again. It suits buffers that live briefly and are
// freed (Arrow's Release) once used: a splitter's row groups, an op's output
// batches, a Parquet writer's pages. Buffers never freed are simply
// collected. The zero value is ready to use, and safe for concurrent use.
//
// Buffers are kept in size classes, four per power of two (a quarter at
// most of slack), from minPooled up; smaller requests are plain
// allocations. Each class is a sync.Pool, so idle buffers go to the
// collector within two collections. Allocate clears what it hands out, and
// Reallocate what it adds: Arrow builders and table.Split rely on zeroed
// bitmaps. Buffers are aligned to 64 bytes, as memory.GoAllocator's are.
type Pool struct {
	classes [maxClass + 1]sync.Pool // of *[]byte, len 0, cap the class size
}

const (
	// minPooled is the smallest request served from a class.
	minPooled = 4 << 10
	// maxClass is the last class index: classes cover up to 1<<maxShift.
	maxShift = 30
	maxClass = (maxShift - minShift + 1) * 4
	minShift = 12 // log2(minPooled)
	align    = 64
)

// classOf returns the class index and capacity of a request of n bytes
// (minPooled <= n <= 1<<maxShift).
func classOf(n int) (idx, size int) {
	k := bits.Len(uint(n-1)) - 1 // 1<<k < n <= 1<<(k+1)
	if k < minShift {
		return 0, minPooled
	}
	step := 1 << (k - 2)
	q := (n - (1 << k) + step - 1) / step // 1..4 quarters above 1<<k
	return (k-minShift)*4 + q, 1<<k + q*step
}

// Allocate returns size zeroed bytes, aligned to 64.
func (p *Pool) Allocate(size int) []byte {
	b, recycled := p.take(size)
	if recycled {
		clear(b)
	}
	return b
}

// AllocateDirty is Allocate for a caller that writes every byte: a
// recycled buffer comes back as its last user left it, not cleared (the
// splitter's scatters wrote each of their buffers twice, once with zeros).
// A fresh one is zero.
func (p *Pool) AllocateDirty(size int) []byte {
	b, _ := p.take(size)
	return b
}

// take returns size bytes aligned to 64, from size's class when it has
// one, and whether they were recycled (else they are zero).
func (p *Pool) take(size int) (b []byte, recycled bool) {
	if size < minPooled || size > 1<<maxShift {
		return memory.DefaultAllocator.Allocate(size), false
	}
	idx, c := classOf(size)
	if v, ok := p.classes[idx].Get().(*[]byte); ok {
		return (*v)[:size], true
	}
	raw := make([]byte, c+align)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw)))) & (align - 1)
	return raw[off : off+size : off+c], false
}

// Reallocate grows or shrinks b to size, keeping its bytes; bytes past
// len(b) are zero.
func (p *Pool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		if size > len(b) {
			clear(b[len(b):size]) // a class's slack may hold an earlier user's bytes
		}
		return b[:size]
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// Free takes b back into its class. Only buffers of a class (their capacity
// says which) are kept; others are left to the collector.
func (p *Pool) Free(b []byte) {
	c := cap(b)
	if c < minPooled || c > 1<<maxShift {
		return
	}
	if idx, size := classOf(c); size == c {
		b = b[:0]
		p.classes[idx].Put(&b)
	}
}

var _ memory.Allocator = (*Pool)(nil)
