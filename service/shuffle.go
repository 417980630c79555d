package service

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Phase is where a shuffle is on one node.
type Phase = shuffle.Phase

// The phases of a shuffle (see package shuffle).
const (
	Open   = shuffle.Open
	Sealed = shuffle.Sealed
	Failed = shuffle.Failed
)

// entry is one shuffle on this node: the state every role shares and each
// role's part. The shuffle's lock guards puts and the roles' parts.
type entry struct {
	*shuffle.State
	recv  *receiver.Shuffle
	puts  map[shuffle.AttemptKey]bool         // local puts: false running, true finished
	coord atomic.Pointer[coordinator.Shuffle] // only on the coordinator, once it coordinates
	// facts: what this node finished as a sender and committed as a
	// receiver, for a coordinator that takes over (guarded by the lock).
	facts control.Facts
	// failover serialises this node's reactions to losses of the shuffle's
	// members: epoch moves it coordinates and takeovers.
	failover sync.Mutex
	// short: the quorum this node last found too small to act on a loss
	// (quorum.go), nil once it may act; its warning is logged once.
	short atomic.Pointer[recovery.Count]
	born  time.Time // when this node installed it
	// aborted: this node asked the coordinator to fail the shuffle (abort)
	aborted atomic.Bool
	// refused: a decision this node sent as coordinator was refused for an
	// older term or epoch: its next check asks its successors (fence.go).
	refused atomic.Bool
}

// coordPart returns sh's coordinator part, nil unless this node coordinates it.
func (sh *entry) coordPart() *coordinator.Shuffle { return sh.coord.Load() }

// finished records an attempt this node finished as a sender (its end
// markers acknowledged by every receiver), reported to the coordinator as c.
func (sh *entry) finished(c *control.Msg) {
	sh.Lock()
	defer sh.Unlock()
	sh.facts.Sent = append(sh.facts.Sent, control.Finished{Task: c.Task, Attempt: c.Attempt, Epoch: c.Epoch, Sent: c.Sent})
}

// committed records an attempt this node committed as a receiver.
func (sh *entry) committed(c control.Committed) {
	sh.Lock()
	defer sh.Unlock()
	sh.facts.Held = append(sh.facts.Held, c)
}

// factsLocked is a copy of this node's facts. Called with the lock held.
func (sh *entry) factsLocked() *control.Facts {
	return &control.Facts{Sent: slices.Clone(sh.facts.Sent), Held: slices.Clone(sh.facts.Held)}
}

// newEntry builds a shuffle's state from its spec and pinned members. lost
// are the members already lost, in order (a shuffle co-partitioned with an
// older one starts in that one's epoch: len(lost)); usually none.
func (s *Service) newEntry(sp *spec.Spec, creator string, members, lost []string) (*entry, error) {
	st, err := shuffle.New(sp, creator, members, lost, s.Name())
	if err != nil {
		return nil, err
	}
	return &entry{State: st, recv: receiver.NewShuffle(st, s.regions), puts: map[shuffle.AttemptKey]bool{}, born: time.Now()}, nil
}
