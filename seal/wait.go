package seal

import (
	"context"
	"errors"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Result is the outcome of a wait that did not fail.
type Result struct {
	// Sealed: every member holds every task's data; outputs can be read.
	Sealed bool
	// Replay lists tasks without a done attempt (not sealed): with no put in
	// flight, the caller runs each of them again with a new attempt number.
	Replay []uint64
	// Epoch is the shuffle's current epoch (how many nodes were lost).
	Epoch uint64
	// ReplaySet is the number of done tasks that lost nodes took with them
	// (summed over losses): what recovery had to run again.
	ReplaySet int
}

// Ask is how a wait asks about one shuffle.
type Ask struct {
	// Poll asks the shuffle's current coordinator for the barrier's state
	// (control.OpBarrier); an unreachable coordinator's error wraps
	// Config.Unavailable.
	Poll func(ctx context.Context) (control.Reply, error)
	// NoQuorum returns an error when this node sees the shuffle's
	// coordinator down and too few members up for a takeover; nil
	// otherwise.
	NoQuorum func() error
}

// Config configures a Waiter. Clock may be nil (the real clock); every
// other field is required.
type Config struct {
	// Unavailable is the sentinel of an unreachable coordinator.
	Unavailable error
	// LossWait is how long a wait keeps asking an unreachable coordinator.
	LossWait time.Duration
	// Clock times LossWait.
	Clock clock.Clock
}

// Waiter waits for seals on one node.
type Waiter struct{ cfg Config }

// New returns a Waiter.
func New(cfg Config) *Waiter {
	cfg.Clock = clock.Or(cfg.Clock)
	return &Waiter{cfg: cfg}
}

// poll is how often a wait asks the coordinator again.
const poll = 20 * time.Millisecond

// Wait waits until st is sealed on every member, or failed, or some task
// has no done attempt (Result.Replay), asking as ask says.
func (w *Waiter) Wait(ctx context.Context, st *shuffle.State, ask Ask) (Result, error) {
	var lostSince time.Time
	for {
		r, err := ask.Poll(ctx)
		if qerr := ask.NoQuorum(); qerr != nil && err != nil {
			return Result{}, qerr // nobody on this side will replace the coordinator
		}
		if errors.Is(err, wire.ErrBusy) {
			r, err = control.Reply{}, nil // the coordinator asks for a pause (it may be closing): ask again
		}
		if w.awaitSuccessor(ctx, st, err, &lostSince) {
			r, err = control.Reply{}, nil // ask again: the coordinator is being replaced
		}
		if err != nil || r.Status == control.StatusSealed || len(r.Replay) > 0 {
			return Result{Sealed: r.Status == control.StatusSealed, Replay: r.Replay, Epoch: r.Epoch, ReplaySet: r.Replayed}, err
		}
		select {
		case <-time.After(poll):
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// awaitSuccessor reports whether a poll that failed with err should be
// asked again: the coordinator was unreachable (since *since, which it
// sets and resets) for less than Config.LossWait.
func (w *Waiter) awaitSuccessor(ctx context.Context, st *shuffle.State, err error, since *time.Time) bool {
	if !errors.Is(err, w.cfg.Unavailable) || ctx.Err() != nil || failed(st) {
		*since = time.Time{}
		return false
	}
	if since.IsZero() {
		*since = w.cfg.Clock.Now()
	}
	return clock.Since(w.cfg.Clock, *since) < w.cfg.LossWait
}

// failed reports whether st failed on this node.
func failed(st *shuffle.State) bool {
	ph, _ := st.Status()
	return ph == shuffle.Failed
}
