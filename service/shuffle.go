package service

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/ownership"
	"github.com/shufflenode/shufflenode/rechunk"
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
	codec       *table.Codec       // dataframes
	part        *table.Partitioner // dataframes
	array       *arrayKind         // arrays
	coordinator string
	members     []string       // pinned at create, sorted
	self        string         // this node's name
	owners0     *ownership.Map // epoch 0's ownership
	created     time.Time      // when this node installed it
	active      atomic.Int64   // unix nanoseconds of the last activity (see expire.go)

	mu     sync.Mutex
	route  *route // the current epoch's routing; replaced, never mutated
	phase  Phase
	err    error
	done   chan struct{} // closed when sealed or failed
	ledger *dedup.Ledger
	recv   map[attemptKey]*recvState
	puts   map[attemptKey]bool // local puts: false running, true finished
	coord  *coordState         // only on the coordinator
}

// route is one epoch's routing of a shuffle, as every member computes it:
// epoch 0's map with the lost members removed in the order they were lost.
type route struct {
	epoch    uint64
	lost     []string // members lost so far, in order
	owners   *ownership.Map
	groupOf  []int         // output partition -> owner's index in shuffle.members
	backupOf []int         // replication 2: partition -> backup's index, -1 for none
	owned    *dedup.Bitset // partitions this node owns
	held     *dedup.Bitset // partitions this node owns or backs up: what it accepts and commits
	live     []string      // members not lost, sorted
}

// barrierDecision is what the tracker asks the coordinator to do.
type barrierDecision = barrier.Decision

// coordState is the coordinator's part of a shuffle.
type coordState struct {
	recovering sync.Mutex      // serialises losses
	afterLoss  barrierDecision // decision of the last Lose, acted on after the broadcast
	tracker    *barrier.Tracker
	begun      map[attemptKey]string // attempt -> node running it
	final      chan struct{}         // closed once every member knows the outcome; replaced on reopen
	concluded  bool                  // final is closed
	err        error                 // the failure, if the shuffle failed
	// announced: every live member took the seal (final is closed without
	// err). A later loss that needs replays reopens the shuffle.
	announced bool
	replayed  int           // tasks in the replay sets of all losses so far
	sealAfter time.Duration // from create to the last announced seal
}

// newShuffle builds a shuffle's state from its spec and pinned members. lost
// are the members already lost, in order (a shuffle co-partitioned with an
// older one starts in that one's epoch: len(lost)); usually none.
func newShuffle(sp *spec.Spec, coordinator string, members, lost []string, self string) (*shuffle, error) {
	schema, err := sp.Validate()
	if err != nil {
		return nil, err
	}
	sh := &shuffle{spec: sp, schema: schema, coordinator: coordinator, members: slices.Sorted(slices.Values(members)),
		self: self, created: time.Now(), done: make(chan struct{}), recv: map[attemptKey]*recvState{}, puts: map[attemptKey]bool{}}
	if err := sh.setupKind(); err != nil {
		return nil, err
	}
	if sh.owners0, err = ownership.New(sp.Seed(), sh.members, sp.Partitions); err != nil {
		return nil, fmt.Errorf("service: shuffle %s: %w", sp.ID, err)
	}
	if sh.route, err = sh.routeFor(slices.Clone(lost)); err != nil {
		return nil, err
	}
	sh.ledger = dedup.NewLedger(sp.Tasks, sp.Partitions)
	sh.touch()
	return sh, nil
}

// setupKind prepares what the shuffle's kind needs: codec and partitioner
// for dataframes, the rechunk plan and dtype for arrays.
func (sh *shuffle) setupKind() error {
	var err error
	if sh.spec.Kind == spec.Array {
		sh.array = &arrayKind{}
		if sh.array.plan, err = sh.spec.Plan(); err != nil {
			return err
		}
		sh.array.dtype, err = rechunk.ParseDType(sh.spec.DType)
		return err
	}
	if sh.codec, err = table.NewCodec(sh.schema, nil); err != nil {
		return err
	}
	sh.part, err = table.NewPartitioner(sh.schema, sh.spec.Rule, sh.spec.Partitions)
	return err
}

// routeFor computes the routing of the epoch in which lost (in order) are
// gone.
func (sh *shuffle) routeFor(lost []string) (*route, error) {
	owners := sh.owners0
	for _, l := range lost {
		var err error
		if owners, err = owners.Without(l); err != nil {
			return nil, fmt.Errorf("service: shuffle %s: epoch %d: %w", sh.id(), len(lost), err)
		}
	}
	return sh.layout(uint64(len(lost)), lost, owners), nil
}

// layout derives a route from an ownership map. A replicated shuffle keeps
// data where its copies are: a partition stays with its epoch-0 owner while
// it lives, then goes to its epoch-0 backup (which holds a copy), and only
// when both are lost to the map's owner; shards go to the owner and, while
// it lives and differs, the epoch-0 backup.
func (sh *shuffle) layout(epoch uint64, lost []string, owners *ownership.Map) *route {
	n := sh.spec.Partitions
	r := &route{epoch: epoch, lost: lost, owners: owners, groupOf: make([]int, n),
		owned: dedup.NewBitset(n), held: dedup.NewBitset(n)}
	idx := make(map[string]int, len(sh.members))
	for i, m := range sh.members {
		idx[m] = i
		if !slices.Contains(lost, m) {
			r.live = append(r.live, m)
		}
	}
	if sh.spec.Replicated() {
		r.backupOf = make([]int, n)
	}
	for p := range n {
		o, b := sh.placement(p, lost, owners)
		r.groupOf[p] = idx[o]
		r.mark(p, o == sh.self, b == sh.self)
		if r.backupOf != nil {
			r.backupOf[p] = -1
			if b != "" {
				r.backupOf[p] = idx[b]
			}
		}
	}
	return r
}

// placement returns partition p's owner and live backup ("" for none).
func (sh *shuffle) placement(p int, lost []string, owners *ownership.Map) (owner, backup string) {
	if !sh.spec.Replicated() {
		return owners.Owner(p), ""
	}
	primary, second := sh.owners0.Owner(p), sh.owners0.Backup(p)
	alive := func(m string) bool { return m != "" && !slices.Contains(lost, m) }
	switch {
	case alive(primary) && alive(second) && primary != second:
		return primary, second
	case alive(primary):
		return primary, ""
	case alive(second):
		return second, ""
	}
	return owners.Owner(p), ""
}

// mark records what this node does for partition p.
func (r *route) mark(p int, owns, backs bool) {
	if owns {
		r.owned.Set(p)
	}
	if owns || backs {
		r.held.Set(p)
	}
}

// routing returns the current epoch's routing.
func (sh *shuffle) routing() *route {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.route
}

// id is the shuffle ID.
func (sh *shuffle) id() string { return sh.spec.ID }

// finish moves the shuffle to Sealed or Failed. Open may become either;
// Sealed may still fail (a node holding outputs was lost); Failed is final.
func (sh *shuffle) finish(p Phase, err error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.phase == Failed || sh.phase == p {
		return
	}
	if sh.phase == Open {
		close(sh.done)
	}
	sh.phase, sh.err = p, err
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
