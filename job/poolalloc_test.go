package job

import (
	"bytes"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

var _ memory.Allocator = (*poolAlloc)(nil)

// TestPoolAllocZeroes checks that a pooled buffer comes back zeroed, in its
// class, and that Reallocate keeps the contents.
func TestPoolAllocZeroes(t *testing.T) {
	p := new(poolAlloc)
	b := p.Allocate(5000)
	if len(b) != 5000 || cap(b) != 8192 {
		t.Fatalf("Allocate(5000): len %d cap %d, want 5000 and 8192", len(b), cap(b))
	}
	for i := range b {
		b[i] = byte(i)
	}
	p.Free(b)
	for range 4 { // sync.Pool may drop a buffer: whichever comes must be zero
		c := p.Allocate(6000)
		if !bytes.Equal(c, make([]byte, 6000)) {
			t.Fatal("a pooled buffer came back not zeroed")
		}
		p.Free(c)
	}
	r := p.Allocate(100)
	copy(r, "abc")
	r = p.Reallocate(20000, r)
	if len(r) != 20000 || string(r[:3]) != "abc" || !bytes.Equal(r[3:], make([]byte, 20000-3)) {
		t.Fatalf("Reallocate lost the contents or left new bytes dirty")
	}
	for _, n := range []int{0, 1, 1 << 27} { // outside the classes: plain memory
		if got := p.Allocate(n); len(got) != n {
			t.Fatalf("Allocate(%d): len %d", n, len(got))
		}
	}
}

// TestPoolAllocGenTask checks that records generated over a pool that
// reuses (and in tests poisons) freed buffers are the same as over Go
// memory, task after task.
func TestPoolAllocGenTask(t *testing.T) {
	p := new(poolAlloc)
	gen := table.GenConfig{Rows: 40000, Seed: 7, PayloadBytes: 24}
	for task := range 8 {
		want := table.GenTask(memory.NewGoAllocator(), gen, task, 8)
		got := table.GenTask(p, gen, task, 8)
		if !array.RecordEqual(want, got) {
			t.Fatalf("task %d: pooled record differs", task)
		}
		want.Release()
		got.Release()
	}
}
