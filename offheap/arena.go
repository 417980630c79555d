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
)

// Arena is a bump allocator over memory mapped outside the Go heap. Its
// buffers are zeroed, 64-byte aligned, and valid while the Arena is
// reachable; they are never freed individually. Safe for concurrent use.
type Arena struct {
	mu     sync.Mutex
	free   []byte // the unused tail of the current region
	maps   *mappings
	mapped atomic.Int64
}

// live counts the bytes mapped by every Arena of the process and not yet
// unmapped.
var live atomic.Int64

// Live returns the bytes that the process's Arenas hold mapped: it falls
// back once an Arena that became unreachable has been cleaned up (after a
// garbage collection). Metrics and leak tests read it.
func Live() int64 { return live.Load() }

// mappings are an Arena's regions, unmapped by its cleanup.
type mappings struct {
	mu   sync.Mutex
	regs [][]byte
}

// New returns an empty Arena.
func New() *Arena {
	a := &Arena{maps: &mappings{}}
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
	if len(a.free) < size {
		reg, ok := a.mapRegion(RegionBytes)
		if !ok {
			return make([]byte, n, size)
		}
		a.free = reg
	}
	b := a.free[:n:size]
	a.free = a.free[size:]
	return b
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
	reg, err := mapBytes(n)
	if err != nil {
		return nil, false
	}
	a.maps.mu.Lock()
	a.maps.regs = append(a.maps.regs, reg)
	a.maps.mu.Unlock()
	a.mapped.Add(int64(len(reg)))
	live.Add(int64(len(reg)))
	return reg, true
}

// Mapped returns the bytes the Arena has mapped (address space; pages
// count toward a process's memory only once touched).
func (a *Arena) Mapped() int64 { return a.mapped.Load() }

// unmapAll unmaps every region; the Arena is unreachable, and with it
// every buffer it handed out.
func (m *mappings) unmapAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.regs {
		unmapBytes(r)
		live.Add(-int64(len(r)))
	}
	m.regs = nil
}
