package splitter

import (
	"context"
	"sync"
)

// budget is a byte semaphore that callers wait on with a context. A request
// larger than the whole budget is granted when nothing else is held, so one
// oversized entry cannot deadlock the node.
type budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
	peak  int64
	wake  chan struct{} // closed and replaced on every release
}

func newBudget(limit int64) *budget {
	return &budget{limit: limit, wake: make(chan struct{})}
}

// tryAcquire takes n bytes if they fit now; otherwise it returns the channel
// that is closed on the next release.
func (b *budget) tryAcquire(n int64) (bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n <= b.limit || b.used == 0 {
		b.used += n
		b.peak = max(b.peak, b.used)
		return true, nil
	}
	return false, b.wake
}

// acquire waits until n bytes are available. starve is called once, before
// the first wait, so the caller can flush what it buffers.
func (b *budget) acquire(ctx context.Context, n int64, starve func()) error {
	for first := true; ; first = false {
		ok, wake := b.tryAcquire(n)
		if ok {
			return nil
		}
		if first && starve != nil {
			starve()
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release returns n bytes and wakes the waiters.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// snapshot returns the bytes in use and the peak.
func (b *budget) snapshot() (used, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}
