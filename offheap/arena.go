package offheap

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Sizes of an Arena's mappings.
const (
	// RegionBytes is the size of the regions small buffers are cut from.
	RegionBytes = 32 << 20
	// align is the alignment of every buffer (enough for any Arrow type).
	align = 64
	// HugePageBytes is the size of a transparent huge page on amd64 and
	// arm64: regions are advised as such pages where Linux has them.
	HugePageBytes = 2 << 20
)

// Arena is a bump allocator over memory mapped outside the Go heap. Its
// buffers are zeroed, 64-byte aligned, and valid while the Arena is
// reachable; they are never freed individually. Safe for concurrent use.
type Arena struct {
	mu     sync.Mutex
	free   []byte // the unused tail of the current region
	dirty  bool   // free came from a Pool: clear what is handed out
	maps   *mappings
	mapped atomic.Int64
}

// mappings are an Arena's regions, unmapped (or given back to the pool)
// by its cleanup.
type mappings struct {
	mu   sync.Mutex
	regs [][]byte
	pool *Pool
}

// New returns an empty Arena.
func New() *Arena { return NewIn(nil) }

// NewIn returns an empty Arena that takes its regions from pool first, and
// gives them back to it once unreachable. A nil pool maps fresh regions and
// unmaps them.
func NewIn(pool *Pool) *Arena {
	a := &Arena{maps: &mappings{pool: pool}}
	runtime.AddCleanup(a, (*mappings).unmapAll, a.maps)
	return a
}

// Alloc returns n zeroed bytes (n > 0) whose capacity is n rounded up to
// the alignment. Buffers larger than a quarter region get a mapping of
// their own. If the system refuses the mapping, the buffer comes from the
// Go heap instead.
func (a *Arena) Alloc(n int) []byte {
	size := (n + align - 1) &^ (align - 1)
	if size > RegionBytes/4 {
		return a.mapOwn(n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.free) < size && !a.nextRegion() {
		return make([]byte, n, size)
	}
	b := a.free[:n:size]
	a.free = a.free[size:]
	if a.dirty {
		clear(b[:size])
	}
	return b
}

// nextRegion makes a region from the pool, or else a fresh one, the
// current region; false if the system refuses the mapping.
func (a *Arena) nextRegion() bool {
	if reg, ok := a.maps.pool.get(); ok {
		a.maps.keep(reg)
		a.mapped.Add(int64(len(reg)))
		a.free, a.dirty = reg, true
		return true
	}
	reg, ok := a.mapRegion(RegionBytes)
	a.free, a.dirty = reg, false
	return ok
}

// mapOwn maps a buffer of n bytes of its own.
func (a *Arena) mapOwn(n int) []byte {
	reg, ok := a.mapRegion(n)
	if !ok {
		return make([]byte, n)
	}
	return reg[:n:n]
}

// mapRegion maps n bytes and records the mapping.
func (a *Arena) mapRegion(n int) ([]byte, bool) {
	reg, err := mapBytes(n, true)
	if err != nil {
		return nil, false
	}
	a.maps.keep(reg)
	a.mapped.Add(int64(len(reg)))
	a.maps.pool.count(int64(len(reg)))
	return reg, true
}

// Mapped returns the bytes the Arena has mapped (address space; pages
// count toward a process's memory only once touched).
func (a *Arena) Mapped() int64 { return a.mapped.Load() }

// keep records a region of the Arena.
func (m *mappings) keep(reg []byte) {
	m.mu.Lock()
	m.regs = append(m.regs, reg)
	m.mu.Unlock()
}

// unmapAll gives every region back to the pool, or unmaps it where the
// pool has no room; the Arena is unreachable, and with it every buffer it
// handed out.
func (m *mappings) unmapAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.regs {
		if !m.pool.put(r) {
			unmapBytes(r)
			m.pool.count(-int64(len(r)))
		}
	}
	m.regs = nil
}

// MapFresh maps n bytes of fresh memory outside the Go heap and outside
// every Arena, as an Arena maps its regions (advised as transparent huge
// pages) when huge, else advised against huge pages; the caller unmaps it
// with Unmap. It serves measuring what memory touched for the first time
// costs (bench.FirstTouchCeilings); no Pool counts it.
func MapFresh(n int, huge bool) ([]byte, error) { return mapBytes(n, huge) }

// Unmap unmaps memory of MapFresh.
func Unmap(b []byte) { unmapBytes(b) }
