package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Node is what the coordinator needs of the node it runs on.
type Node interface {
	// Broadcast sends m to every node named, in parallel, and joins the
	// errors. It blocks until every reply or ctx's end.
	Broadcast(ctx context.Context, nodes []string, m control.Msg) error
	// Go runs fn on a goroutine the node waits for when it closes; ctx
	// ends then.
	Go(fn func(ctx context.Context))
	// Forget drops the node's send queues of shuffle id and refuses
	// further sends of epochs before epoch: puts of an older epoch fail
	// with a stale epoch and run again.
	Forget(id string, epoch uint64)
}

// Config configures a Coordinator. Every field is required but Clock.
type Config struct {
	Node Node
	Log  *slog.Logger
	// LossWait is how long to wait for the failure detector when a member
	// does not take the seal, before failing the shuffle.
	LossWait time.Duration
	// Clock times LossWait; nil: the wall clock.
	Clock clock.Clock
}

// Coordinator drives the barrier of every shuffle this node coordinates.
type Coordinator struct{ cfg Config }

// New returns a coordinator.
func New(cfg Config) *Coordinator {
	cfg.Clock = clock.Or(cfg.Clock)
	return &Coordinator{cfg: cfg}
}

// Shuffle is the coordinator's part of one shuffle. Its fields are guarded
// by the shuffle's lock, except recovering.
type Shuffle struct {
	*shuffle.State
	recovering gate             // serialises losses
	afterLoss  barrier.Decision // decision of the last Lose, acted on after the broadcast
	// moving: an epoch move is being announced to the survivors. Until they
	// all took it, the barrier hands out no replays: a replay put on a
	// survivor that has not reopened yet would be refused as sealed.
	moving    bool
	tracker   *barrier.Tracker
	begun     map[shuffle.AttemptKey]string // attempt -> node running it
	final     chan struct{}                 // closed once every member knows the outcome; replaced on reopen
	concluded bool                          // final is closed
	err       error                         // the failure, if the shuffle failed
	// announced: every live member took the seal (final is closed without
	// err). A later loss that needs replays reopens the shuffle.
	announced bool
	replayed  int                // tasks in the replay sets of all losses so far
	handovers recovery.HandOvers // drains handing their partitions over (handover.go)
	sealAfter time.Duration      // from create to the last announced seal
}

// NewShuffle returns the coordinator's part of st: its tracker's receivers
// are the live members, in the shuffle's starting epoch.
func NewShuffle(st *shuffle.State) (*Shuffle, error) {
	rt := st.Route()
	tr, err := barrier.New(barrier.Config{Shuffle: st.ID(), Tasks: st.Spec.Tasks, Receivers: rt.Live})
	if err == nil && rt.Epoch != 0 {
		err = tr.SetReceivers(int(rt.Epoch), rt.Live)
	}
	if err != nil {
		return nil, err
	}
	return &Shuffle{State: st, recovering: newGate(), tracker: tr, begun: map[shuffle.AttemptKey]string{}, final: make(chan struct{})}, nil
}

// gate is a lock held across network requests and their retries. Its
// waiters block on a channel: in a testing/synctest bubble they count as
// durably blocked, so the bubble's clock moves on and the holder's timers
// fire (a waiter on a sync.Mutex would stall the bubble). Make it with
// newGate.
type gate chan struct{}

func newGate() gate    { return make(gate, 1) }
func (g gate) Lock()   { g <- struct{}{} }
func (g gate) Unlock() { <-g }
