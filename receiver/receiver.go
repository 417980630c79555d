package receiver

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/mempool"
	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
)

// Config configures a Receiver. Every field is required.
type Config struct {
	// Store holds the received pieces.
	Store *spill.Store
	// OutputBatchRows is the number of rows Get aims for in one batch.
	OutputBatchRows int64
	// Allocator for the output batches.
	Allocator memory.Allocator
	// Committed is called for each attempt this node commits, without the
	// shuffle's lock, on the goroutine that received the data: it must not
	// block (report the commit to the coordinator in the background).
	Committed func(st *shuffle.State, c Commit)
	// Lookup returns the receive side of shuffle id on this node, or the
	// error that says why the node does not hold it (HandlePayload).
	Lookup func(id string) (*Shuffle, error)
	// DiskFailed is called when the spill disk failed to store a shuffle's
	// data (spill.ErrDisk), on the goroutine that received it, before
	// HandlePayload returns the failure: the node cannot go on with the
	// shuffle. It must not block.
	DiskFailed func(st *shuffle.State, err error)
}

// Receiver is one node's receive side: it stores the shards of every
// shuffle the node holds and serves their outputs.
type Receiver struct {
	cfg Config
	// out holds the buffers of output batches GetPooled's callers have
	// released, for the next ones (a read allocates its partition's bytes
	// again: 538 of the demo's 1,786 MB of allocations went to them).
	out mempool.Pool
	// batches holds outBatches that reads are done with: a read of a small
	// partition then grows no slice of ranges (at 100,000 partitions of
	// 26 rows, their growth was a fifth of the reads' allocations).
	batches sync.Pool
}

// New returns a receiver.
func New(cfg Config) *Receiver { return &Receiver{cfg: cfg} }

// Shuffle is the receive side of one shuffle: the attempts this node
// receives and its dedup ledger, guarded by the shuffle's lock.
type Shuffle struct {
	*shuffle.State
	ledger *dedup.Ledger
	recv   map[shuffle.AttemptKey]*attempt
	// adopted: the (task, attempt, partition)s a draining node handed
	// over and this node committed, with their row sums (handover.go).
	adopted map[adoptKey]shard.PartSum
	asm     assemblies   // arrays: new chunks assembled as pieces arrive (own locks)
	accs    accumulators // dataframes: output partitions accumulated as entries arrive (own locks)
	stage   stage        // dataframes: entries of tiny runs waiting to be accumulated (stage.go)
	out     readCounters // what reads of its partitions handed out (atomic)
	// regions is where the shuffle's arenas take their memory first, and
	// give it back (the node's pool; nil: fresh mappings).
	regions *offheap.Pool
	gate    gate // orders receives before the drop of the shuffle's data (Close)
}

// gate lets receives store data until the shuffle is closed: a receive
// holds the read lock while it stores, Close takes the write lock.
type gate struct {
	mu     sync.RWMutex
	closed bool
}

// Close refuses the shuffle's later receives and waits for those in
// progress to return. Call it after the shuffle failed and before its data
// is dropped from the store (spill.Store.DropShuffle): otherwise a receive
// that looked the shuffle up before the drop could store pieces, or reserve
// memory, after it, and the store would hold them for a shuffle that no
// one reads or drops again. Entries staged for accumulation are released.
// Close is idempotent.
func (sh *Shuffle) Close() {
	sh.gate.mu.Lock()
	sh.gate.closed = true
	sh.gate.mu.Unlock()
	sh.stage.discard()
}

// enter admits a receive unless the shuffle is closed; a nil error must be
// followed by exit when the receive has stored what it will.
func (sh *Shuffle) enter() error {
	sh.gate.mu.RLock()
	if !sh.gate.closed {
		return nil
	}
	sh.gate.mu.RUnlock()
	if err := sh.OpenErr(); err != nil {
		return err
	}
	return fmt.Errorf("%w: shuffle %s was dropped on node %s", shuffle.ErrFailed, sh.ID(), sh.Self)
}

func (sh *Shuffle) exit() { sh.gate.mu.RUnlock() }

// OffheapBytes returns the bytes the shuffle's arenas have mapped (its
// assembled chunks and accumulated partitions).
func (sh *Shuffle) OffheapBytes() int64 {
	var n int64
	sh.asm.mu.Lock()
	if sh.asm.arena != nil {
		n += sh.asm.arena.Mapped()
	}
	sh.asm.mu.Unlock()
	sh.accs.mu.Lock()
	if sh.accs.arena != nil {
		n += sh.accs.arena.Mapped()
	}
	sh.accs.mu.Unlock()
	return n
}

// NewShuffle returns the receive side of st, whose arenas use regions
// (nil: none).
func NewShuffle(st *shuffle.State, regions *offheap.Pool) *Shuffle {
	return &Shuffle{State: st, ledger: dedup.NewLedger(st.Spec.Tasks, st.Spec.Partitions),
		recv: map[shuffle.AttemptKey]*attempt{}, regions: regions}
}

// attempt is a receiver's progress on one (task, attempt).
type attempt struct {
	epoch     uint64          // epoch of the attempt's messages
	seen      map[uint32]bool // entries stored or being stored, by seq
	stored    uint32          // entries fully stored
	held      barrier.Totals
	end       *shard.End
	committed bool
}
