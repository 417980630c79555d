package service

import (
	"sync/atomic"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/failover"
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

// entry is one shuffle on this node: the state every role shares (with
// failover's part: the coordinator part, the facts, package failover) and
// each role's part. The shuffle's lock guards puts and the roles' parts.
type entry struct {
	*failover.Shuffle
	recv *receiver.Shuffle
	puts map[shuffle.AttemptKey]bool // local puts: false running, true finished
	// aborted: this node asked the coordinator to fail the shuffle (diskFailed)
	aborted atomic.Bool
}

// coordPart returns sh's coordinator part, nil unless this node coordinates it.
func (sh *entry) coordPart() *coordinator.Shuffle { return sh.CoordPart() }

// committed records an attempt this node committed as a receiver.
func (sh *entry) committed(c control.Committed) { sh.Committed(c) }

// newEntry builds a shuffle's state from its spec and pinned members. lost
// are the members already lost, in order (a shuffle co-partitioned with an
// older one starts in that one's epoch: len(lost)); usually none.
func (s *Service) newEntry(sp *spec.Spec, creator string, members, lost []string) (*entry, error) {
	st, err := shuffle.NewWithClock(s.cfg.Clock, sp, creator, members, lost, s.Name())
	if err != nil {
		return nil, err
	}
	return &entry{Shuffle: failover.NewShuffle(st, st.Created), recv: receiver.NewShuffle(st, s.regions), puts: map[shuffle.AttemptKey]bool{}}, nil
}
