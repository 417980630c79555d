package service

import (
	"github.com/shufflenode/shufflenode/coordinator"
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
// role's part. The shuffle's lock guards puts and the roles' parts.
type entry struct {
	*shuffle.State
	recv  *receiver.Shuffle
	puts  map[shuffle.AttemptKey]bool // local puts: false running, true finished
	coord *coordinator.Shuffle        // only on the coordinator
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
