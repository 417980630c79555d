package splitter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/shard"
)

// queue is the buffer and the send queue of one (shuffle, destination).
type queue struct {
	s      *Splitter
	key    qkey
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	cond    *sync.Cond
	cur     *Batch   // being filled
	pending []*Batch // ready to send
	err     error    // sticky: set by a failed send or by stop
	stopped bool
	idle    int     // workers waiting in next for a batch
	order   ordered // batches complete (their end markers) in queue order
	// cutting is the shuffle's Cuts being cut on this node (see due).
	cutting *atomic.Int64
	// timer marks the batch being filled lingered (Config.Linger) once
	// its first end marker waited that long; nil when not running.
	timer *time.Timer
}

// ordered holds completed batches until every batch queued before them
// completed too, so that an end marker is reported only after the entries
// sent before it.
type ordered struct {
	next    uint64            // seq of the next batch queued
	through uint64            // every batch with a lower seq has completed
	held    map[uint64]*Batch // completed before an earlier batch
	err     error             // the first error of a completed batch, in queue order
}

func newQueue(s *Splitter, k qkey, cutting *atomic.Int64) *queue {
	ctx, cancel := context.WithCancel(s.ctx)
	q := &queue{s: s, key: k, ctx: ctx, cancel: cancel, cutting: cutting}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// add appends e (costing n bytes) and sends the buffer once it is full.
func (q *queue) add(epoch uint64, e shard.Entry, n, limit int64, release func()) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	b := q.batch(epoch)
	b.Entries = append(b.Entries, e)
	if release != nil {
		b.releases = append(b.releases, release)
	}
	b.bytes += n
	if b.bytes >= limit {
		q.pushLocked()
	}
	return nil
}

// end appends an end marker and sends the buffer if a worker is idle and
// the buffer is due (see due). If every worker is sending, or other tasks
// of the shuffle are still being cut here, the buffer waits (next, linger),
// gathering the markers and entries of the tasks that end meanwhile: one
// message for many tasks' markers and entries instead of one each, and the
// marker is never later than one send or Config.Linger behind.
func (q *queue) end(epoch uint64, e End) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	b := q.batch(epoch)
	b.Ends = append(b.Ends, e)
	switch {
	case q.idle > 0 && q.due(b):
		q.pushLocked()
	case q.timer == nil && q.s.cfg.Linger > 0:
		q.timer = time.AfterFunc(q.s.cfg.Linger, func() { q.linger(b) })
	}
	return nil
}

// maxEndsPerBatch is the end markers after which a buffer is due without
// lingering.
const maxEndsPerBatch = 256

// due reports whether b, the buffer being filled and holding end
// markers, should go as soon as a worker is free: it is a good share of a
// full buffer, holds many markers, lingered, or no other task of the
// shuffle is being cut here to add to it.
func (q *queue) due(b *Batch) bool {
	return b.lingered || q.s.cfg.Linger <= 0 || q.cutting.Load() <= 0 ||
		b.bytes >= q.s.cfg.BufferBytes/4 || len(b.Ends) >= maxEndsPerBatch
}

// linger marks b lingered, if it is still being filled, and wakes a worker
// for it.
func (q *queue) linger(b *Batch) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.timer = nil
	if q.cur == b {
		b.lingered = true
		q.cond.Signal()
	}
}

// batch returns the batch being filled for epoch; a batch of another epoch is
// sent first, since one message carries one epoch.
func (q *queue) batch(epoch uint64) *Batch {
	if q.cur != nil && q.cur.Epoch != epoch {
		q.pushLocked()
	}
	if q.cur == nil {
		q.cur = &Batch{Shuffle: q.key.shuffle, Dest: q.key.dest, Epoch: epoch}
	}
	return q.cur
}

// flush sends the batch being filled, if any.
func (q *queue) flush() {
	q.mu.Lock()
	q.pushLocked()
	q.mu.Unlock()
}

func (q *queue) pushLocked() {
	if q.cur == nil {
		return
	}
	q.cur.seq = q.order.next
	q.order.next++
	q.pending = append(q.pending, q.cur)
	q.cur = nil
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	q.cond.Signal()
}

// stop fails the queue with err, wakes its workers and cancels sends in flight.
func (q *queue) stop(err error) {
	q.mu.Lock()
	q.pushLocked()
	if q.err == nil {
		q.err = err
	}
	q.stopped = true
	q.cond.Broadcast()
	q.mu.Unlock()
	q.cancel()
}

// fail records a permanent send failure and returns the queue's sticky
// error: this failure, or the reason the queue was stopped first (a send
// cancelled by Forget fails with ErrForgotten, not with the cancellation).
func (q *queue) fail(err error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = fmt.Errorf("splitter: shuffle %s: send to %s: %w", q.key.shuffle, q.key.dest, err)
	}
	return q.err
}

// next waits for a batch to send; ok is false when the queue stopped and is
// drained. err is the queue's sticky error at the time.
func (q *queue) next() (b *Batch, err error, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) == 0 && !q.stopped {
		if q.cur != nil && len(q.cur.Ends) > 0 && q.due(q.cur) {
			q.pushLocked() // markers that waited for a worker (end)
			break
		}
		q.idle++
		q.cond.Wait()
		q.idle--
	}
	if len(q.pending) == 0 {
		return nil, nil, false
	}
	b = q.pending[0]
	q.pending[0] = nil
	q.pending = q.pending[1:]
	return b, q.err, true
}

// work is one of the queue's MaxInFlight sender goroutines.
func (q *queue) work() {
	defer q.s.wg.Done()
	for {
		b, err, ok := q.next()
		if !ok {
			return
		}
		if err == nil {
			if err = q.s.deliver(q.ctx, b); err != nil {
				err = q.fail(err)
				q.s.cfg.Logger.Warn("send failed", "shuffle", b.Shuffle, "peer", b.Dest, "err", err)
			}
		}
		q.s.account(b, err)
		q.completed(b, err)
	}
}

// completed records that b's send ended with err and finishes, in queue
// order, every batch whose earlier batches have all completed: a batch
// after a failed one finishes with that failure.
func (q *queue) completed(b *Batch, err error) {
	q.mu.Lock()
	b.err = err
	if q.order.held == nil {
		q.order.held = map[uint64]*Batch{}
	}
	q.order.held[b.seq] = b
	var ready []*Batch
	for {
		nb, ok := q.order.held[q.order.through]
		if !ok {
			break
		}
		delete(q.order.held, q.order.through)
		q.order.through++
		if q.order.err == nil {
			q.order.err = nb.err
		}
		nb.err = q.order.err
		ready = append(ready, nb)
	}
	q.mu.Unlock()
	for _, nb := range ready {
		nb.finish(nb.err)
	}
}
