package budget

import (
	"context"
	"sync"
)

// Budget is a number of bytes that callers Acquire and Release. The zero
// value is not usable: call New. It is safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []*waiter // in arrival order
}

// waiter is one Acquire waiting for room; ready is closed once it holds n.
type waiter struct {
	n     int64
	ready chan struct{}
}

// New returns a budget of size bytes (at least 1).
func New(size int64) *Budget {
	return &Budget{size: max(size, 1)}
}

// Size is the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// Acquire takes n bytes (at most Size: a larger request takes the whole
// budget) once the budget has room for them and every earlier waiter has
// been served, and returns the bytes taken, which the caller must Release.
// It returns ctx's error, having taken nothing, if ctx ends first.
func (b *Budget) Acquire(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 0), b.size)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return n, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // served as ctx ended: give the bytes back
		b.used -= n
	default:
		b.remove(w)
	}
	b.grant()
	return 0, ctx.Err()
}

// Charge takes n bytes without waiting, even past the size; the caller
// Releases them as it does acquired bytes.
func (b *Budget) Charge(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used += n
	b.mu.Unlock()
}

// Release gives back n bytes taken by Acquire or Charge.
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used = max(b.used-n, 0)
	b.grant()
}

// Used is the bytes taken and not released.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting is the number of Acquires waiting for room.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

// grant serves the waiters at the head of the queue that now fit; b.mu is
// held.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters[0] = nil
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// remove drops w from the queue; b.mu is held.
func (b *Budget) remove(w *waiter) {
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			return
		}
	}
}
