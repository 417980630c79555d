package splitter

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/mempool"
	"github.com/shufflenode/shufflenode/shard"
)

// Sender delivers one batch to its destination. Send returns when the
// destination acknowledged the batch. An error implementing RetryAfter is
// retried; any other error fails the batch's queue for good. Send is called
// from splitter goroutines and must honour ctx.
type Sender interface {
	Send(ctx context.Context, b *Batch) error
}

// Splitter buffers and batch-sends entries for every shuffle on a node.
type Splitter struct {
	cfg    Config
	send   Sender
	mem    *budget
	ctx    context.Context // parent of every queue's context; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stats  counters
	pool   mempool.Pool // group buffers of Cuts, back after their entries were sent

	mu     sync.Mutex
	queues map[qkey]*queue
	floor  map[string]uint64 // shuffle -> oldest epoch still sent (ForgetBefore)
	// cutting counts, per shuffle, the Cuts started and not yet ended or
	// closed: while others cut, a marker's buffer is worth holding back
	// (Config.Linger), for them to fill.
	cutting map[string]*atomic.Int64
	closed  bool
}

type qkey struct{ shuffle, dest string }

// New returns a Splitter that sends through s. Close it to stop its goroutines.
func New(cfg Config, s Sender) (*Splitter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	return &Splitter{
		cfg: cfg, send: s, mem: newBudget(cfg.MemoryLimit),
		ctx: ctx, cancel: cancel, queues: make(map[qkey]*queue), floor: make(map[string]uint64),
		cutting: make(map[string]*atomic.Int64),
	}, nil
}

// Add appends e to the buffer of (shuffle, dest), waiting while the node's
// send budget is exhausted. The splitter owns e.Data afterwards. It returns
// the queue's error if an earlier send to dest for this shuffle failed.
func (s *Splitter) Add(ctx context.Context, shuffle string, epoch uint64, dest string, e shard.Entry) error {
	return s.AddReleased(ctx, shuffle, epoch, dest, e, nil)
}

// AddReleased is Add for an entry whose data lives while release (if not
// nil) is not called: the splitter calls it once, when the message that
// carried the entry was acknowledged or failed for good (the Sender is done
// with it either way), or before AddReleased returns an error.
func (s *Splitter) AddReleased(ctx context.Context, shuffle string, epoch uint64, dest string, e shard.Entry, release func()) (err error) {
	if release != nil {
		defer func() {
			if err != nil {
				release()
			}
		}()
	}
	n := entrySize(&e)
	if err := s.mem.acquire(ctx, n, s.flushAll); err != nil {
		return fmt.Errorf("splitter: shuffle %s: waiting for send memory: %w", shuffle, err)
	}
	q, err := s.queueOf(shuffle, epoch, dest)
	if err == nil {
		err = q.add(epoch, e, n, s.cfg.BufferBytes, release)
	}
	if err != nil {
		s.mem.release(n)
	}
	return err
}

// End appends an end-of-task marker to (shuffle, dest) and sends the buffer.
// If End returns nil, end.Done is called exactly once later; if it returns an
// error, end.Done is never called.
func (s *Splitter) End(shuffle string, epoch uint64, dest string, end End) error {
	q, err := s.queueOf(shuffle, epoch, dest)
	if err != nil {
		return err
	}
	return q.end(epoch, end)
}

// Flush sends every non-empty buffer of shuffle.
func (s *Splitter) Flush(shuffle string) {
	for _, q := range s.snapshot(func(k qkey) bool { return k.shuffle == shuffle }) {
		q.flush()
	}
}

// flushAll sends every non-empty buffer: called before waiting for memory, so
// the bytes held in partial buffers can come back.
func (s *Splitter) flushAll() {
	for _, q := range s.snapshot(func(qkey) bool { return true }) {
		q.flush()
	}
}

// ForgetBefore is Forget for an epoch move: it also refuses, with
// ErrForgotten, every later Add and End of shuffle for an epoch before
// epoch, so a put of the old epoch fails at once instead of opening a new
// queue (perhaps to a node that was lost).
func (s *Splitter) ForgetBefore(shuffle string, epoch uint64) {
	s.mu.Lock()
	if !s.closed {
		s.floor[shuffle] = max(s.floor[shuffle], epoch)
	}
	s.mu.Unlock()
	s.Forget(shuffle)
}

// Drop is Forget for a shuffle that is gone from this node: it also drops
// what ForgetBefore remembered of it.
func (s *Splitter) Drop(shuffle string) {
	s.mu.Lock()
	delete(s.floor, shuffle)
	delete(s.cutting, shuffle)
	s.mu.Unlock()
	s.Forget(shuffle)
}

// Forget stops the queues of shuffle: buffered and queued batches are
// completed with ErrForgotten and their memory released; sends in flight are
// cancelled.
func (s *Splitter) Forget(shuffle string) {
	s.mu.Lock()
	var qs []*queue
	for k, q := range s.queues {
		if k.shuffle == shuffle {
			qs = append(qs, q)
			delete(s.queues, k)
		}
	}
	s.mu.Unlock()
	for _, q := range qs {
		q.stop(fmt.Errorf("%w: %s", ErrForgotten, shuffle))
	}
}

// Close stops every queue and waits for the splitter's goroutines. Pending
// work completes with ErrClosed. Close is idempotent.
func (s *Splitter) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	qs := s.queues
	s.queues = nil
	s.mu.Unlock()
	for _, q := range qs {
		q.stop(ErrClosed)
	}
	s.cancel()
	s.wg.Wait()
	return nil
}

// queueOf returns the queue of (shuffle, dest) for a message of epoch,
// starting it on first use; an epoch that ForgetBefore left behind is
// refused.
func (s *Splitter) queueOf(shuffle string, epoch uint64, dest string) (*queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if epoch < s.floor[shuffle] {
		return nil, fmt.Errorf("%w: %s: epoch %d, now %d", ErrForgotten, shuffle, epoch, s.floor[shuffle])
	}
	k := qkey{shuffle, dest}
	if q, ok := s.queues[k]; ok {
		return q, nil
	}
	q := newQueue(s, k, s.cuttingLocked(shuffle))
	s.queues[k] = q
	for range s.cfg.MaxInFlight {
		s.wg.Add(1)
		go q.work()
	}
	return q, nil
}

// Expect counts a Cut of shuffle about to start (its attempt is still
// registering with the coordinator) among those being cut, until the
// returned release is called (it is idempotent; call it once the Cut is
// made, or when none will be). End markers that wait for the shuffle's
// other Cuts (see queue.due) then wait for this one too. A node's puts of
// small tasks spend much of their time registering: counting only the
// Cuts, a marker usually found none and went at once, a message for each
// task or two. At 100,000 tasks x 1,000 partitions on 4 serve processes,
// counting the registering puts took the nodes from 75 to 55-58 CPU s and
// the run from 11.7 to 15.2-15.8 MB/s (2026-12-02).
func (s *Splitter) Expect(shuffle string) (release func()) {
	return s.enter(shuffle).leave
}

// cutting is one place among a shuffle's Cuts being cut (a Cut, or a put
// Expect counts), left once.
type cutting struct {
	s       *Splitter
	shuffle string
	n       *atomic.Int64 // the shuffle's count (Splitter.cutting)
	left    bool
}

// enter counts one more of shuffle's Cuts being cut.
func (s *Splitter) enter(shuffle string) *cutting {
	c := &cutting{s: s, shuffle: shuffle, n: s.cuttingOf(shuffle)}
	c.n.Add(1)
	return c
}

// leave leaves the count, once; the last to leave wakes the shuffle's
// queues (see wake).
func (c *cutting) leave() {
	if c.left {
		return
	}
	c.left = true
	if c.n.Add(-1) == 0 {
		c.s.wake(c.shuffle)
	}
}

// cuttingOf returns the count of shuffle's Cuts being cut.
func (s *Splitter) cuttingOf(shuffle string) *atomic.Int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cuttingLocked(shuffle)
}

func (s *Splitter) cuttingLocked(shuffle string) *atomic.Int64 {
	n := s.cutting[shuffle]
	if n == nil {
		n = new(atomic.Int64)
		s.cutting[shuffle] = n
	}
	return n
}

// wake has the idle workers of shuffle's queues look again at the buffers
// that hold end markers: the last of the shuffle's Cuts here ended or
// closed, so nobody is left to fill them (see queue.due).
func (s *Splitter) wake(shuffle string) {
	for _, q := range s.snapshot(func(k qkey) bool { return k.shuffle == shuffle }) {
		q.mu.Lock()
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}

// snapshot returns the queues whose key matches keep.
func (s *Splitter) snapshot(keep func(qkey) bool) []*queue {
	s.mu.Lock()
	defer s.mu.Unlock()
	var qs []*queue
	for k, q := range s.queues {
		if keep(k) {
			qs = append(qs, q)
		}
	}
	return qs
}

// deliver sends b, retrying what may be retried.
func (s *Splitter) deliver(ctx context.Context, b *Batch) error {
	for failures := 0; ; {
		err := s.send.Send(ctx, b)
		if err == nil {
			return nil
		}
		d, ok := retryDelay(err)
		if !ok || ctx.Err() != nil {
			return err
		}
		if d == 0 {
			failures++
			if failures > s.cfg.MaxRetries {
				return fmt.Errorf("%w (%d tries): %w", ErrGaveUp, failures, err)
			}
			d = s.backoff(failures)
		}
		s.stats.retries.Add(1)
		s.cfg.Logger.Debug("send retry", "shuffle", b.Shuffle, "peer", b.Dest, "after", d, "err", err)
		if !sleep(ctx, d) {
			return ctx.Err()
		}
	}
}

// backoff is the delay before retry number n (1-based).
func (s *Splitter) backoff(n int) time.Duration {
	d := s.cfg.RetryBase << min(n-1, 20)
	return min(d, s.cfg.RetryMax)
}

// account counts b's send, which ended with err, and returns its memory
// (its end markers are finished by its queue, in order).
func (s *Splitter) account(b *Batch, err error) {
	s.stats.record(b, err)
	s.mem.release(b.bytes)
	for _, r := range b.releases {
		r()
	}
	b.releases = nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
