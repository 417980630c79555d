package service

import (
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/receiver"
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
// role's part. The shuffle's lock guards recv, puts and coord.
type entry struct {
	*shuffle.State
	recv  *receiver.Shuffle
	puts  map[shuffle.AttemptKey]bool // local puts: false running, true finished
	coord *coordState                 // only on the coordinator
}

// barrierDecision is what the tracker asks the coordinator to do.
type barrierDecision = barrier.Decision

// coordState is the coordinator's part of a shuffle.
type coordState struct {
	recovering sync.Mutex      // serialises losses
	afterLoss  barrierDecision // decision of the last Lose, acted on after the broadcast
	tracker    *barrier.Tracker
	begun      map[shuffle.AttemptKey]string // attempt -> node running it
	final      chan struct{}                 // closed once every member knows the outcome; replaced on reopen
	concluded  bool                          // final is closed
	err        error                         // the failure, if the shuffle failed
	// announced: every live member took the seal (final is closed without
	// err). A later loss that needs replays reopens the shuffle.
	announced bool
	replayed  int           // tasks in the replay sets of all losses so far
	sealAfter time.Duration // from create to the last announced seal
}

// newEntry builds a shuffle's state from its spec and pinned members. lost
// are the members already lost, in order (a shuffle co-partitioned with an
// older one starts in that one's epoch: len(lost)); usually none.
func newEntry(sp *spec.Spec, coordinator string, members, lost []string, self string) (*entry, error) {
	st, err := shuffle.New(sp, coordinator, members, lost, self)
	if err != nil {
		return nil, err
	}
	return &entry{State: st, recv: receiver.NewShuffle(st), puts: map[shuffle.AttemptKey]bool{}}, nil
}
