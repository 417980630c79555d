package offheap

import (
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/shufflenode/shufflenode/internal/testkit"
)

// fillArena allocates regions whole regions' worth of buffers from a new
// Arena in pool, writes 0xff over them, and returns the first buffer's
// address. The Arena is unreachable when it returns.
func fillArena(pool *Pool, regions int) uintptr {
	a := NewIn(pool)
	var first uintptr
	for i := range regions * 4 {
		b := a.Alloc(RegionBytes / 4)
		b[0] = 0xff
		for j := 1; j < len(b); j *= 2 {
			copy(b[j:], b[:j])
		}
		if i == 0 {
			first = uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		}
	}
	return first
}

// waitPooled collects garbage until the pool holds want bytes.
func waitPooled(t testing.TB, pool *Pool, want int64) {
	t.Helper()
	testkit.WaitCollected(t, 10*time.Second, fmt.Sprintf("the pool to hold %d bytes", want), func() bool { return pool.Bytes() == want })
}

// TestPoolReuse: the regions of an unreachable Arena go back to its pool;
// the next Arena takes them (the same memory, no new mapping) and hands out
// zeroed buffers although the last one left 0xff there.
func TestPoolReuse(t *testing.T) {
	pool := NewPool(4*RegionBytes, time.Minute)
	defer pool.Close()
	first := fillArena(pool, 2)
	waitPooled(t, pool, 2*RegionBytes)
	before := pool.Mapped()
	a := NewIn(pool)
	seen := map[uintptr]bool{}
	for range 8 {
		b := a.Alloc(RegionBytes / 4)
		seen[uintptr(unsafe.Pointer(unsafe.SliceData(b)))] = true
		for i, v := range b {
			if v != 0 {
				t.Fatalf("byte %d of a buffer from a pooled region is %#x, want 0", i, v)
			}
		}
	}
	if !seen[first] {
		t.Fatal("the new Arena did not reuse the pooled regions")
	}
	if pool.Mapped() != before || pool.Bytes() != 0 || a.Mapped() != 2*RegionBytes {
		t.Fatalf("pool's Mapped %d (was %d), pool %d, Arena's Mapped %d: want the pooled regions taken as they were", pool.Mapped(), before, pool.Bytes(), a.Mapped())
	}
	runtime.KeepAlive(a)
}

// TestPoolLimit: a pool keeps regions up to its limit and unmaps the rest;
// a closed pool keeps none.
func TestPoolLimit(t *testing.T) {
	pool := NewPool(RegionBytes, time.Minute)
	fillArena(pool, 3)
	waitPooled(t, pool, RegionBytes)
	waitMapped(t, pool, RegionBytes)
	pool.Close()
	pool.Close()
	if pool.Bytes() != 0 {
		t.Fatalf("closed pool holds %d bytes", pool.Bytes())
	}
	waitMapped(t, pool, 0)
	fillArena(pool, 1)
	waitMapped(t, pool, 0)
}

// TestPoolTrim: regions idle longer than the pool's idle time are unmapped.
func TestPoolTrim(t *testing.T) {
	pool := NewPool(4*RegionBytes, time.Second)
	defer pool.Close()
	fillArena(pool, 2)
	waitPooled(t, pool, 2*RegionBytes)
	waitPooled(t, pool, 0) // after a second
	waitMapped(t, pool, 0)
}

// waitMapped collects garbage until pool's Mapped is want.
func waitMapped(t *testing.T, pool *Pool, want int64) {
	t.Helper()
	testkit.WaitCollected(t, 10*time.Second, fmt.Sprintf("the pool's arenas to map %d bytes", want), func() bool { return pool.Mapped() == want })
}

// BenchmarkArenaFill fills 64 MiB of buffers from a new Arena per
// iteration, with fresh mappings (every page faulted in again) and with a
// Pool (the previous Arena's regions, cleared as they are handed out).
func BenchmarkArenaFill(b *testing.B) {
	for _, tc := range []struct {
		name string
		pool *Pool
	}{{"fresh", nil}, {"pooled", NewPool(4*RegionBytes, time.Minute)}} {
		b.Run(tc.name, func(b *testing.B) {
			defer tc.pool.Close()
			b.SetBytes(2 * RegionBytes)
			for b.Loop() {
				fillArena(tc.pool, 2)
				b.StopTimer()
				if tc.pool != nil {
					waitPooled(b, tc.pool, 2*RegionBytes)
				} else {
					runtime.GC()
				}
				b.StartTimer()
			}
		})
	}
}
