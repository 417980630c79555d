package offheap

import (
	"testing"
	"unsafe"
)

// TestAlloc: buffers are zeroed, aligned, do not overlap, and large ones
// get mappings of their own.
func TestAlloc(t *testing.T) {
	a := New()
	var bufs [][]byte
	for _, n := range []int{1, 63, 64, 100, 4096, RegionBytes / 8, RegionBytes/4 + 1, 7} {
		b := a.Alloc(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p%align != 0 {
			t.Fatalf("Alloc(%d) at %#x, not %d-aligned", n, p, align)
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Alloc(%d)[%d] = %d, want zeroed", n, i, v)
			}
		}
		for i := range b {
			b[i] = byte(len(bufs) + 1)
		}
		bufs = append(bufs, b)
	}
	for i, b := range bufs {
		for _, v := range b {
			if v != byte(i+1) {
				t.Fatalf("buffer %d was overwritten by another", i)
			}
		}
	}
	if m := a.Mapped(); m < RegionBytes+RegionBytes/4 {
		t.Fatalf("Mapped = %d, want a region and a mapping of its own", m)
	}
}

func BenchmarkAllocFill(b *testing.B) {
	b.SetBytes(RegionBytes / 2)
	for range b.N {
		a := New()
		for range 64 {
			buf := a.Alloc(RegionBytes / 128)
			for i := 0; i < len(buf); i += 4096 {
				buf[i] = 1
			}
		}
	}
}
