package mempool

import (
	"slices"
	"testing"
	"unsafe"
)

// TestClassOf: every request gets the smallest class that holds it, with at
// most a quarter of slack, and a class's size maps back to itself.
func TestClassOf(t *testing.T) {
	last := -1
	for n := minPooled; n <= 1<<20; n += 97 {
		idx, size := classOf(n)
		if size < n || (n > minPooled && size > n+n/4+1) {
			t.Fatalf("classOf(%d) = size %d", n, size)
		}
		if idx < last {
			t.Fatalf("classOf(%d) = index %d, after %d", n, idx, last)
		}
		last = idx
		if i2, s2 := classOf(size); i2 != idx || s2 != size {
			t.Fatalf("classOf(%d) = %d, %d; classOf(%d) = %d, %d", n, idx, size, size, i2, s2)
		}
	}
	if idx, _ := classOf(1 << maxShift); idx > maxClass {
		t.Fatalf("the largest class has index %d > %d", idx, maxClass)
	}
}

// TestPoolReuses: a freed buffer serves the next request of its class,
// cleared and aligned; small requests are plain allocations.
func TestPoolReuses(t *testing.T) {
	var p Pool
	b := p.Allocate(10_000)
	if len(b) != 10_000 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%align != 0 {
		t.Fatalf("len %d, address %p", len(b), unsafe.SliceData(b))
	}
	c := dirtyReuse(t, &p, b, 9_000)
	for i, x := range c {
		if x != 0 {
			t.Fatalf("byte %d of a reused buffer is %#x, want 0", i, x)
		}
	}
	if s := p.Allocate(100); len(s) != 100 || cap(s) >= minPooled {
		t.Fatalf("a small request: len %d cap %d", len(s), cap(s))
	}
	grown := p.Reallocate(50_000, c[:10])
	if len(grown) != 50_000 || grown[0] != 0 {
		t.Fatalf("reallocated: len %d", len(grown))
	}
}

// dirtyReuse fills b with 0xff, frees it and allocates n bytes, which must
// be b again (the test is skipped if a collection emptied the pool).
func dirtyReuse(t *testing.T, p *Pool, b []byte, n int) []byte {
	t.Helper()
	for i := range b {
		b[i] = 0xff
	}
	p.Free(b)
	c := p.Allocate(n)
	if unsafe.SliceData(c) != unsafe.SliceData(b) {
		t.Skip("the pool dropped the buffer (a collection ran in between)")
	}
	return c
}

// TestReallocateClearsSlack: growing a buffer within its class's capacity
// hands out zeroed bytes, even where an earlier user of the buffer wrote.
func TestReallocateClearsSlack(t *testing.T) {
	var p Pool
	b := p.Allocate(10_000) // class size above 10,000: slack to grow into
	if cap(b) <= len(b) {
		t.Fatalf("no slack: len %d cap %d", len(b), cap(b))
	}
	c := dirtyReuse(t, &p, b[:cap(b)], 9_000)
	grown := p.Reallocate(cap(c), c)
	if unsafe.SliceData(grown) != unsafe.SliceData(c) {
		t.Fatalf("growing within the capacity moved the buffer")
	}
	for i, x := range grown {
		if x != 0 {
			t.Fatalf("byte %d of the grown buffer is %#x, want 0", i, x)
		}
	}
}

// TestAllocateDirty: AllocateDirty hands a freed buffer back as its last
// user left it (Allocate clears it), aligned and of its class, and a fresh
// or unpooled one zeroed.
func TestAllocateDirty(t *testing.T) {
	var p Pool
	b := p.AllocateDirty(10_000)
	if len(b) != 10_000 || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%align != 0 || slices.ContainsFunc(b, func(x byte) bool { return x != 0 }) {
		t.Fatalf("a fresh buffer: len %d, address %p, or not zero", len(b), unsafe.SliceData(b))
	}
	for i := range b {
		b[i] = 0xff
	}
	p.Free(b)
	c := p.AllocateDirty(9_000)
	if unsafe.SliceData(c) != unsafe.SliceData(b) {
		t.Skip("the pool dropped the buffer (a collection ran in between)")
	}
	if len(c) != 9_000 || cap(c) != cap(b) || c[0] != 0xff || c[8_999] != 0xff {
		t.Fatalf("reused dirty: len %d cap %d (want cap %d), first byte %#x", len(c), cap(c), cap(b), c[0])
	}
	if s := p.AllocateDirty(100); len(s) != 100 || s[0] != 0 || s[99] != 0 {
		t.Fatalf("a small request: len %d", len(s))
	}
}
