package service

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

// ErrDraining: the node is draining (it leaves the cluster soon) and takes
// no new input task; it travels as ErrUnavailable, so a client runs the
// task on another node.
var ErrDraining = errors.New("service: node draining")

// errNoHandover: a shuffle holds committed data on this node that no other
// node keeps a copy of, and this node cannot copy it to the partitions'
// next owners (it coordinates the shuffle, or the shuffle is an array
// rechunk: see handover.go), so the node leaves as lost and the
// coordinator replays it.
var errNoHandover = errors.New("service: this node cannot hand its committed partitions over")

// drainState is the service's part of a drain: whether puts are refused,
// and what the last drain decided.
type drainState struct {
	refusing atomic.Bool
	running  atomic.Bool // a Drain call runs
	fellBack atomic.Bool
	// handedBytes: bytes this node copied to new owners when it drained;
	// adoptedBytes: bytes it took from draining nodes (handover.go).
	handedBytes, adoptedBytes atomic.Int64
	// copied, if set, is called after each node took its share of a
	// shuffle's handover (tests cut a handover there).
	copied atomic.Pointer[func(shuffle, to string)]

	mu   sync.Mutex
	req  chan struct{} // closed by RequestDrain (made on first use)
	once sync.Once
}

// requested returns the channel RequestDrain closes.
func (d *drainState) requested() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.req == nil {
		d.req = make(chan struct{})
	}
	return d.req
}

// RequestDrain asks the process that runs this node to drain it and stop,
// as SIGTERM does (the admin endpoint POST /drain and the Flight action
// "drain" call it). It does not block; calling it again does nothing.
func (s *Service) RequestDrain() {
	c := s.drain.requested()
	s.drain.once.Do(func() { close(c) })
}

// DrainRequested returns a channel closed once RequestDrain was called.
func (s *Service) DrainRequested() <-chan struct{} { return s.drain.requested() }

// DrainResult says how a drain ended.
type DrainResult struct {
	// HandedOver: every shuffle this node held needs no replay once it
	// leaves; false: it leaves as lost (Why says why).
	HandedOver bool
	Why        string
	// Waited is how long the drain waited for running puts to finish.
	Waited time.Duration
	// HandedBytes is what the drain copied to the partitions' new owners.
	HandedBytes int64
}

// drainPoll is how often a drain checks whether the puts it waits for
// finished.
const drainPoll = 20 * time.Millisecond

// Drain prepares the node to leave the cluster on purpose (the recovery
// core's Drain decides each step): from now on new puts are refused with
// ErrDraining (as ErrUnavailable: the client runs the task elsewhere), the
// puts running finish, and each shuffle held is checked for what leaving
// would cost. Drain blocks until then or until ctx ends: a deadline that
// passes (context.DeadlineExceeded) or a cancel (the node is killed) makes
// the drain fall back to the loss path at once. The caller then leaves
// the cluster (member.Cluster.Leave) and closes the service; the
// coordinators of the shuffles move their epochs as after a loss.
// Puts stay refused after Drain returns. A second concurrent Drain fails.
func (s *Service) Drain(ctx context.Context) (DrainResult, error) {
	if !s.drain.running.CompareAndSwap(false, true) {
		return DrainResult{}, fmt.Errorf("%w: node %s: a drain already runs", ErrConflict, s.Name())
	}
	defer s.drain.running.Store(false)
	start := time.Now()
	d := recovery.NewDrain()
	var res DrainResult
	var handed, failed []string
	for {
		v := s.drainView(ctx, handed, failed)
		handed, failed = nil, nil
		dec := d.Step(v)
		switch dec.Action {
		case recovery.DrainRefuse:
			s.drain.refusing.Store(true)
			s.log.Info("draining: refusing new puts", "running", v.Running)
		case recovery.DrainWait:
			s.drainWait(ctx)
		case recovery.DrainHandOver:
			res.Waited = time.Since(start)
			handed, failed = s.handOverAll(ctx, dec.Shuffles)
		case recovery.DrainLeave:
			res.HandedOver, res.Why, res.HandedBytes = dec.HandedOver, dec.Why, s.drain.handedBytes.Load()
			s.drain.fellBack.Store(!dec.HandedOver)
			s.log.Info("drained", "handed_over", dec.HandedOver, "why", dec.Why, "waited", res.Waited, "bytes", res.HandedBytes)
			return res, nil
		default:
			return res, nil
		}
	}
}

// drainView is what a drain sees now.
func (s *Service) drainView(ctx context.Context, handed, failed []string) recovery.DrainView {
	v := recovery.DrainView{Running: s.runningPuts(), Handed: handed, Failed: failed}
	for _, sh := range s.held() {
		if ph, _ := sh.Status(); ph != Failed {
			v.Held = append(v.Held, sh.ID())
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

// drainWait waits one poll, or until ctx ends.
func (s *Service) drainWait(ctx context.Context) {
	t := time.NewTimer(drainPoll)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// runningPuts counts the puts this node runs, over every shuffle.
func (s *Service) runningPuts() int {
	n := 0
	for _, sh := range s.held() {
		sh.Lock()
		for _, done := range sh.puts {
			if !done {
				n++
			}
		}
		sh.Unlock()
	}
	return n
}

// handOverAll hands over each shuffle in ids and sorts them by outcome.
func (s *Service) handOverAll(ctx context.Context, ids []string) (handed, failed []string) {
	for _, id := range ids {
		if err := s.handOver(ctx, id); err != nil {
			s.log.Warn("draining: cannot hand over", "shuffle", id, "err", err)
			failed = append(failed, id)
			continue
		}
		handed = append(handed, id)
	}
	return handed, failed
}

// drainRefusal refuses a new put of sh while the node drains.
func (s *Service) drainRefusal(sh *entry, k shuffle.AttemptKey) error {
	if !s.drain.refusing.Load() {
		return nil
	}
	return fmt.Errorf("%w: %w: shuffle %s task %d attempt %d: node %s leaves the cluster, run the task on another node",
		ErrUnavailable, ErrDraining, sh.ID(), k.Task, k.Attempt, s.Name())
}

// Draining reports whether the node refuses new puts because it drains.
func (s *Service) Draining() bool { return s.drain.refusing.Load() }
