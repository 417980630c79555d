package shuffle

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/ownership"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
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

// AttemptKey names one attempt of one input task.
type AttemptKey struct {
	Task    uint64
	Attempt uint32
}

// ArrayKind is what an array shuffle needs on every node.
type ArrayKind struct {
	Plan  *splitaxes.Plan
	DType rechunk.DType
}

// State is one shuffle's state on one node. The exported fields are set by
// New and never change.
type State struct {
	Spec    *spec.Spec
	Schema  *arrow.Schema
	Codec   *table.Codec       // dataframes
	Part    *table.Partitioner // dataframes
	Array   *ArrayKind         // arrays
	Creator string             // the node that took the create: the first coordinator candidate
	Members []string           // pinned at create, sorted
	Self    string             // this node's name
	Created time.Time          // when this node installed it, on its clock

	owners0    *ownership.Map // epoch 0's ownership
	candidates []string       // coordinator candidates, in order (see coord.go)
	start      uint64         // the epoch the shuffle started in
	active     atomic.Int64   // unix nanoseconds of the last activity
	clock      clock.Clock    // stamps Created and the activity

	mu    sync.Mutex
	route *Route // the current epoch's routing; replaced, never mutated
	phase Phase
	err   error
	done  chan struct{} // closed when sealed or failed
}

// New builds a shuffle's state from its spec, the node that took its create
// (its first coordinator) and its pinned members. lost are
// the members already lost, in order (a shuffle co-partitioned with an older
// one starts in that one's epoch: len(lost)); usually none.
func New(sp *spec.Spec, creator string, members, lost []string, self string) (*State, error) {
	return NewWithClock(nil, sp, creator, members, lost, self)
}

// NewWithClock is New with the activity (Touch, IdleFor) and Created
// stamped on c; nil: the wall clock.
func NewWithClock(c clock.Clock, sp *spec.Spec, creator string, members, lost []string, self string) (*State, error) {
	schema, err := sp.Precheck() // setupKind plans an array once
	if err != nil {
		return nil, err
	}
	c = clock.Or(c)
	st := &State{Spec: sp, Schema: schema, Creator: creator, Members: slices.Sorted(slices.Values(members)),
		Self: self, Created: c.Now(), clock: c, done: make(chan struct{}), start: uint64(len(lost))}
	if !slices.Contains(st.Members, creator) {
		return nil, fmt.Errorf("service: shuffle %s: creator %s is not a pinned member", sp.ID, creator)
	}
	st.candidates = recovery.Candidates(sp.ID, creator, st.Members)
	if err := st.setupKind(); err != nil {
		return nil, err
	}
	if st.owners0, err = st.ownersFor(); err != nil {
		return nil, fmt.Errorf("service: shuffle %s: %w", sp.ID, err)
	}
	if st.route, err = st.RouteFor(slices.Clone(lost)); err != nil {
		return nil, err
	}
	st.Touch()
	return st, nil
}

// setupKind prepares what the shuffle's kind needs: codec and partitioner
// for dataframes, the rechunk plan and dtype for arrays.
func (st *State) setupKind() error {
	var err error
	if st.Spec.Kind == spec.Array {
		st.Array = &ArrayKind{}
		if st.Array.Plan, err = st.Spec.Plan(); err != nil {
			return err
		}
		st.Array.DType, err = rechunk.ParseDType(st.Spec.DType)
		return err
	}
	if st.Codec, err = table.NewCodec(st.Schema, nil); err != nil {
		return err
	}
	st.Part, err = table.NewPartitioner(st.Schema, st.Spec.Rule, st.Spec.Partitions)
	return err
}

// ID is the shuffle ID.
func (st *State) ID() string { return st.Spec.ID }

// Touch records activity on the shuffle now.
func (st *State) Touch() { st.active.Store(clock.Or(st.clock).Now().UnixNano()) }

// IdleFor is how long the shuffle has been idle at now.
func (st *State) IdleFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, st.active.Load()))
}

// Lock takes the shuffle's lock (see the package doc for what it guards).
func (st *State) Lock() { st.mu.Lock() }

// Unlock releases the shuffle's lock.
func (st *State) Unlock() { st.mu.Unlock() }

// Route returns the current epoch's routing.
func (st *State) Route() *Route {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.route
}

// RouteLocked returns the current epoch's routing. Called with the lock held.
func (st *State) RouteLocked() *Route { return st.route }

// SetRouteLocked makes rt the current epoch's routing. Called with the lock
// held.
func (st *State) SetRouteLocked(rt *Route) { st.route = rt }

// Finish moves the shuffle to Sealed or Failed. Open may become either;
// Sealed may still fail (a node holding outputs was lost); Failed is final.
func (st *State) Finish(p Phase, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.phase == Failed || st.phase == p {
		return
	}
	if st.phase == Open {
		close(st.done)
	}
	st.phase, st.err = p, err
}

// ReopenLocked takes a sealed shuffle back to Open for a new epoch: the seal
// of the old one was not announced everywhere, or a node holding outputs was
// lost after it. Called with the lock held.
func (st *State) ReopenLocked() {
	if st.phase == Sealed {
		st.phase = Open
		st.done = make(chan struct{})
	}
}

// Status returns the phase and, if failed, why.
func (st *State) Status() (Phase, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.phase, st.err
}

// OpenErr returns nil if the shuffle takes input, else why not.
func (st *State) OpenErr() error {
	switch p, err := st.Status(); p {
	case Sealed:
		return fmt.Errorf("%w: %s", ErrSealed, st.ID())
	case Failed:
		return fmt.Errorf("%w: %s: %w", ErrFailed, st.ID(), err)
	}
	return nil
}
