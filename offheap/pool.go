package offheap

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pool keeps the regions of Arenas that became unreachable, for the next
// Arenas of the same owner (a node's shuffles, one after another), instead
// of unmapping them. A region taken from the pool is cleared as it is handed
// out, which costs a fraction of what fresh pages cost: the kernel must zero
// and map each of those, and under a hypervisor that takes back freed guest
// memory the host must back it again (about 1 ms per 2 MiB page measured
// here, against ~0.1 ms to clear it).
//
// A Pool holds at most Max bytes, and unmaps a region that waited longer
// than Idle. Only whole regions (RegionBytes) are kept; the mappings of
// large buffers are unmapped as before. Safe for concurrent use.
type Pool struct {
	max  int64
	idle time.Duration
	// mapped is Mapped.
	mapped atomic.Int64

	mu     sync.Mutex
	regs   []idleRegion // oldest first
	bytes  int64
	timer  *time.Timer
	closed bool
}

// idleRegion is a pooled region and when it was put back.
type idleRegion struct {
	b  []byte
	at time.Time
}

// NewPool returns a Pool that keeps up to limit bytes of regions, each for
// at most idle (at least a second).
func NewPool(limit int64, idle time.Duration) *Pool {
	return &Pool{max: limit, idle: max(idle, time.Second)}
}

// Mapped returns the bytes that the Arenas of the Pool (NewIn) and the
// Pool itself hold mapped (nil: 0): the off-heap memory of the Pool's
// owner. It falls once an Arena that became unreachable has been cleaned
// up (after a garbage collection) and its regions unmapped; pooled regions
// count until they are unmapped. Metrics, memory limits and leak tests
// read it.
func (p *Pool) Mapped() int64 {
	if p == nil {
		return 0
	}
	return p.mapped.Load()
}

// count adds n (negative: unmapped) to the bytes mapped under p (nil: no
// count).
func (p *Pool) count(n int64) {
	if p != nil {
		p.mapped.Add(n)
	}
}

// Bytes returns the bytes of the regions the Pool holds now (nil: 0).
func (p *Pool) Bytes() int64 {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

// get returns (nil pool: never) the most recently pooled region (its pages are the likeliest
// to be resident), or false when the pool is empty. The region's bytes are
// whatever its last Arena left there.
func (p *Pool) get() ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.regs)
	if n == 0 {
		return nil, false
	}
	r := p.regs[n-1].b
	p.regs = p.regs[:n-1]
	p.bytes -= int64(len(r))
	return r, true
}

// put keeps reg; false when it does not fit (or the Pool is closed) and the
// caller must unmap it.
func (p *Pool) put(reg []byte) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(reg) != RegionBytes || p.bytes+int64(len(reg)) > p.max {
		return false
	}
	p.regs = append(p.regs, idleRegion{b: reg, at: time.Now()})
	p.bytes += int64(len(reg))
	if p.timer == nil {
		p.timer = time.AfterFunc(p.idle, p.trim)
	}
	return true
}

// trim unmaps the regions that waited longer than idle, and comes back
// when the oldest of the rest will have.
func (p *Pool) trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	now := time.Now()
	n := 0
	for n < len(p.regs) && now.Sub(p.regs[n].at) >= p.idle {
		p.unmapLocked(p.regs[n].b)
		n++
	}
	p.regs = append(p.regs[:0], p.regs[n:]...)
	if len(p.regs) > 0 && !p.closed {
		p.timer = time.AfterFunc(p.idle-now.Sub(p.regs[0].at), p.trim)
	}
}

// Close unmaps every pooled region, and makes the Pool keep no more: an
// Arena freed later unmaps its regions. Idempotent; a nil Pool is closed.
func (p *Pool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	for _, r := range p.regs {
		p.unmapLocked(r.b)
	}
	p.regs = nil
}

// unmapLocked unmaps a pooled region.
func (p *Pool) unmapLocked(b []byte) {
	unmapBytes(b)
	p.count(-int64(len(b)))
	p.bytes -= int64(len(b))
}
