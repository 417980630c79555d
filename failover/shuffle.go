package failover

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Shuffle is one shuffle on this node as failover sees it: the state every
// role shares, the coordinator part once this node coordinates, and what
// failover keeps of it. The shuffle's lock guards the facts.
type Shuffle struct {
	*shuffle.State
	coord atomic.Pointer[coordinator.Shuffle] // only on the coordinator, once it coordinates
	// facts: what this node finished as a sender and committed as a
	// receiver, for a coordinator that takes over (guarded by the lock).
	facts control.Facts
	// failover serialises this node's reactions to losses of the shuffle's
	// members: epoch moves it coordinates and takeovers.
	failover gate
	// short: the quorum this node last found too small to act on a loss
	// (quorum.go), nil once it may act; its warning is logged once.
	short atomic.Pointer[recovery.Count]
	born  time.Time // when this node installed it, on the driver's clock
	// refused: a decision this node sent as coordinator was refused for an
	// older term or epoch: its next check asks its successors (fence.go).
	refused atomic.Bool
}

// NewShuffle is st as failover sees it, installed on this node at born.
func NewShuffle(st *shuffle.State, born time.Time) *Shuffle {
	return &Shuffle{State: st, born: born, failover: newGate()}
}

// CoordPart returns sh's coordinator part, nil unless this node coordinates it.
func (sh *Shuffle) CoordPart() *coordinator.Shuffle { return sh.coord.Load() }

// SetCoordPart makes co sh's coordinator part: this node coordinates sh.
func (sh *Shuffle) SetCoordPart(co *coordinator.Shuffle) { sh.coord.Store(co) }

// Finished records an attempt this node finished as a sender (its end
// markers acknowledged by every receiver), reported to the coordinator as c.
func (sh *Shuffle) Finished(c *control.Msg) {
	sh.Lock()
	defer sh.Unlock()
	sh.facts.Sent = append(sh.facts.Sent, control.Finished{Task: c.Task, Attempt: c.Attempt, Epoch: c.Epoch, Sent: c.Sent})
}

// Committed records an attempt this node committed as a receiver.
func (sh *Shuffle) Committed(c control.Committed) {
	sh.Lock()
	defer sh.Unlock()
	sh.facts.Held = append(sh.facts.Held, c)
}

// factsLocked is a copy of this node's facts. Called with the lock held.
func (sh *Shuffle) factsLocked() *control.Facts {
	return &control.Facts{Sent: slices.Clone(sh.facts.Sent), Held: slices.Clone(sh.facts.Held)}
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
