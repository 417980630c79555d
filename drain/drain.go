package drain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Drainer is one node's part of a drain: whether puts are refused, what
// the last drain decided, and the handovers it sends and takes.
type Drainer struct {
	cfg      Config
	refusing atomic.Bool
	running  atomic.Bool // a Drain call runs
	fellBack atomic.Bool
	// handedBytes: bytes this node copied to new owners when it drained;
	// adoptedBytes: bytes it took from draining nodes.
	handedBytes, adoptedBytes atomic.Int64
	// copied, if set, is called after each node took its share of a
	// shuffle's handover (tests cut a handover there).
	copied atomic.Pointer[func(shuffle, to string)]

	mu   sync.Mutex
	req  chan struct{} // closed by Request (made on first use)
	once sync.Once
}

// New returns a Drainer.
func New(cfg Config) *Drainer { return &Drainer{cfg: cfg} }

// requested returns the channel Request closes.
func (d *Drainer) requested() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.req == nil {
		d.req = make(chan struct{})
	}
	return d.req
}

// Request asks the process that runs this node to drain it and stop. It
// does not block; calling it again does nothing.
func (d *Drainer) Request() {
	c := d.requested()
	d.once.Do(func() { close(c) })
}

// Requested returns a channel closed once Request was called.
func (d *Drainer) Requested() <-chan struct{} { return d.requested() }

// SetCopied has f called each time this node, draining, copied its share
// of a shuffle's partitions to one new owner.
func (d *Drainer) SetCopied(f func(shuffle, to string)) { d.copied.Store(&f) }

// Result says how a drain ended.
type Result struct {
	// HandedOver: every shuffle this node held needs no replay once it
	// leaves; false: it leaves as lost (Why says why).
	HandedOver bool
	Why        string
	// Waited is how long the drain waited for running puts to finish.
	Waited time.Duration
	// HandedBytes is what the drain copied to the partitions' new owners.
	HandedBytes int64
}

// poll is how often a drain checks whether the puts it waits for
// finished.
const poll = 20 * time.Millisecond

// Drain prepares the node to leave the cluster on purpose (the recovery
// core's Drain decides each step): from now on new puts are refused
// (Refusal), the puts running finish, and each shuffle held is handed
// over where leaving would cost a replay. Drain blocks until then or until
// ctx ends: a deadline that passes (context.DeadlineExceeded) or a cancel
// (the node is killed) makes the drain fall back to the loss path at once.
// Puts stay refused after Drain returns. A second concurrent Drain fails
// with Config.Conflict.
func (d *Drainer) Drain(ctx context.Context) (Result, error) {
	h := d.cfg.Host
	if !d.running.CompareAndSwap(false, true) {
		return Result{}, fmt.Errorf("%w: node %s: a drain already runs", d.cfg.Conflict, h.Name())
	}
	defer d.running.Store(false)
	start := time.Now()
	core := recovery.NewDrain()
	var res Result
	var handed, failed []string
	for {
		v := d.view(ctx, handed, failed)
		handed, failed = nil, nil
		dec := core.Step(v)
		switch dec.Action {
		case recovery.DrainRefuse:
			d.refusing.Store(true)
			h.Log().Info("draining: refusing new puts", "running", v.Running)
		case recovery.DrainWait:
			wait(ctx)
		case recovery.DrainHandOver:
			res.Waited = time.Since(start)
			handed, failed = d.handOverAll(ctx, dec.Shuffles)
		case recovery.DrainLeave:
			res.HandedOver, res.Why, res.HandedBytes = dec.HandedOver, dec.Why, d.handedBytes.Load()
			d.fellBack.Store(!dec.HandedOver)
			h.Log().Info("drained", "handed_over", dec.HandedOver, "why", dec.Why, "waited", res.Waited, "bytes", res.HandedBytes)
			return res, nil
		default:
			return res, nil
		}
	}
}

// view is what a drain sees now.
func (d *Drainer) view(ctx context.Context, handed, failed []string) recovery.DrainView {
	v := recovery.DrainView{Running: d.cfg.Host.RunningPuts(), Handed: handed, Failed: failed}
	for _, st := range d.cfg.Host.Held() {
		if ph, _ := st.Status(); ph != shuffle.Failed {
			v.Held = append(v.Held, st.ID())
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		v.Expired = true
	case ctx.Err() != nil:
		v.Killed = true
	}
	return v
}

// wait waits one poll, or until ctx ends.
func wait(ctx context.Context) {
	t := time.NewTimer(poll)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// handOverAll hands over each shuffle in ids and sorts them by outcome.
func (d *Drainer) handOverAll(ctx context.Context, ids []string) (handed, failed []string) {
	for _, id := range ids {
		if err := d.handOver(ctx, id); err != nil {
			d.cfg.Host.Log().Warn("draining: cannot hand over", "shuffle", id, "err", err)
			failed = append(failed, id)
			continue
		}
		handed = append(handed, id)
	}
	return handed, failed
}

// Refusal refuses a new put of attempt k of shuffle id while the node
// drains (nil when it does not).
func (d *Drainer) Refusal(id string, k shuffle.AttemptKey) error {
	if !d.refusing.Load() {
		return nil
	}
	return fmt.Errorf("%w: %w: shuffle %s task %d attempt %d: node %s leaves the cluster, run the task on another node",
		d.cfg.Unavailable, ErrDraining, id, k.Task, k.Attempt, d.cfg.Host.Name())
}

// Draining reports whether the node refuses new puts because it drains.
func (d *Drainer) Draining() bool { return d.refusing.Load() }
