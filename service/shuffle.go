package service

import (
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/ownership"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// Phase is where a shuffle is on one node.
type Phase int

const (
	// Open: accepting input.
	Open Phase = iota
	// Sealed: barrier reached; outputs can be read.
	Sealed
	// Failed: the shuffle failed; Err says why.
	Failed
)

// String names the phase.
func (p Phase) String() string {
	return [...]string{"open", "sealed", "failed"}[p]
}

// attemptKey names one attempt of one input task.
type attemptKey struct {
	task    uint64
	attempt uint32
}

// shuffle is one shuffle's state on one node.
type shuffle struct {
	spec        *spec.Spec
	schema      *arrow.Schema
	codec       *table.Codec
	part        *table.Partitioner
	coordinator string
	members     []string // pinned at create, sorted
	owners      *ownership.Map
	groupOf     []int // output partition -> index in members
	owned       *recovery.Bitset
	epoch       uint64

	mu     sync.Mutex
	phase  Phase
	err    error
	done   chan struct{} // closed when sealed or failed
	ledger *recovery.Ledger
	recv   map[attemptKey]*recvState
	puts   map[attemptKey]bool // local puts: false running, true finished
	coord  *coordState         // only on the coordinator
}

// coordState is the coordinator's part of a shuffle.
type coordState struct {
	tracker *barrier.Tracker
	begun   map[attemptKey]string // attempt -> node running it
	final   chan struct{}         // closed once every member knows the outcome
	err     error                 // the failure, if the shuffle failed
}

// newShuffle builds a shuffle's state from its spec and pinned members.
func newShuffle(sp *spec.Spec, coordinator string, members []string, self string) (*shuffle, error) {
	schema, err := sp.Validate()
	if err != nil {
		return nil, err
	}
	sh := &shuffle{spec: sp, schema: schema, coordinator: coordinator, members: slices.Sorted(slices.Values(members)),
		done: make(chan struct{}), recv: map[attemptKey]*recvState{}, puts: map[attemptKey]bool{}}
	if sh.codec, err = table.NewCodec(schema, nil); err != nil {
		return nil, err
	}
	if sh.part, err = table.NewPartitioner(schema, sp.Rule, sp.Partitions); err != nil {
		return nil, err
	}
	if sh.owners, err = ownership.New(sp.Seed(), sh.members, sp.Partitions); err != nil {
		return nil, fmt.Errorf("service: shuffle %s: %w", sp.ID, err)
	}
	sh.layout(self)
	sh.ledger = recovery.NewLedger(sp.Tasks, sp.Partitions)
	return sh, nil
}

// layout computes groupOf and the partitions self owns.
func (sh *shuffle) layout(self string) {
	idx := make(map[string]int, len(sh.members))
	for i, m := range sh.members {
		idx[m] = i
	}
	sh.groupOf = make([]int, sh.spec.Partitions)
	sh.owned = recovery.NewBitset(sh.spec.Partitions)
	for p := range sh.groupOf {
		o := sh.owners.Owner(p)
		sh.groupOf[p] = idx[o]
		if o == self {
			sh.owned.Set(p)
		}
	}
}

// id is the shuffle ID.
func (sh *shuffle) id() string { return sh.spec.ID }

// finish moves the shuffle to Sealed or Failed once.
func (sh *shuffle) finish(p Phase, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.phase != Open {
		return
	}
	sh.phase, sh.err = p, err
	close(sh.done)
}

// state returns the phase and error.
func (sh *shuffle) state() (Phase, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.phase, sh.err
}

// openErr returns nil if the shuffle takes input, else why not.
func (sh *shuffle) openErr() error {
	switch p, err := sh.state(); p {
	case Sealed:
		return fmt.Errorf("%w: %s", ErrSealed, sh.id())
	case Failed:
		return fmt.Errorf("%w: %s: %w", ErrFailed, sh.id(), err)
	}
	return nil
}
