package receiver

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// An array shuffle's owner assembles each new chunk as its pieces arrive:
// the first piece of a new chunk reserves the chunk's final size against the
// store's budget (spill.Store.Reserve), and every piece is copied straight
// to its place while it is still in the cache, so a read hands out the
// finished buffer. A piece is placed once: a resent or replayed piece is
// only compared with the placed one (input tasks give the same data on
// every attempt; two attempts that differ fail the entry loudly). When the
// budget has no room, or the chunking has unknown sizes, pieces are stored
// as before and placed when the chunk is read.

// assemblies are the new chunks of one array shuffle being assembled here.
// Their buffers come from an arena outside the Go heap (see offheap): fresh
// pages, so there is nothing to clear, in huge pages where the kernel has
// them; the collector neither scans nor moves them. The arena is unmapped
// once the shuffle is unreachable; a chunk handed out carries it as Keep.
// A piece finds its assembly without a lock (an array of one slot per new
// chunk, made with the first assembly): with one element per piece, a lock
// shared by every piece of the shuffle was where the receivers queued.
type assemblies struct {
	mu    sync.Mutex                                 // starting an assembly, arena
	slots atomic.Pointer[[]atomic.Pointer[assembly]] // per new chunk; nil until the first
	arena *offheap.Arena
}

// get returns new chunk p's assembly, or nil if none was started.
func (as *assemblies) get(p uint32) *assembly {
	if slots := as.slots.Load(); slots != nil && int(p) < len(*slots) {
		return (*slots)[p].Load()
	}
	return nil
}

// assembly is one new chunk being assembled. The old chunks whose pieces
// were placed are its assembler's placed pieces (Assembler.PlacedOld):
// nothing is held per piece beyond its bit.
type assembly struct {
	mu  sync.Mutex
	asm *rechunk.Assembler
}

// assembleOnArrival reports whether sh's new chunks can be assembled as
// pieces arrive: their sizes must all be known up front.
func assembleOnArrival(sh *Shuffle) bool {
	for _, axis := range sh.Spec.NewChunks {
		if slices.Contains(axis, splitaxes.Unknown) {
			return false
		}
	}
	return true
}

// assembly returns new chunk p's assembly, starting it if the budget has
// room for the chunk; nil when the piece must be stored instead.
func (rc *Receiver) assembly(sh *Shuffle, p uint32) *assembly {
	if a := sh.asm.get(p); a != nil {
		return a
	}
	sh.asm.mu.Lock()
	defer sh.asm.mu.Unlock()
	if a := sh.asm.get(p); a != nil {
		return a
	}
	plan := sh.Array.Plan
	idx := splitaxes.Unravel(int(p), plan.NewGrid())
	n, err := rechunk.NumBytes(sh.Array.DType, newChunkShape(sh, idx))
	if err != nil || !rc.cfg.Store.Reserve(sh.ID(), int64(n)) {
		return nil
	}
	if sh.asm.arena == nil {
		sh.asm.arena = offheap.NewIn(sh.regions)
	}
	cfg := rechunk.Config{Alloc: sh.asm.arena.Alloc, Keep: sh.asm.arena}
	asm, err := rechunk.NewAssembler(plan, idx, sh.Array.DType, cfg)
	if err != nil {
		rc.cfg.Store.Unreserve(sh.ID(), int64(n))
		return nil
	}
	slots := sh.asm.slots.Load()
	if slots == nil {
		s := make([]atomic.Pointer[assembly], sh.Spec.Partitions)
		slots = &s
		sh.asm.slots.Store(slots)
	}
	a := &assembly{asm: asm}
	(*slots)[p].Store(a)
	return a
}

// assembled returns new chunk p's assembly if one was started.
func (sh *Shuffle) assembled(p uint32) *assembly {
	return sh.asm.get(p)
}

// newChunkShape is the shape of new chunk idx (all sizes known).
func newChunkShape(sh *Shuffle, idx []int) []int64 {
	shape := make([]int64, len(idx))
	for a, i := range idx {
		shape[a] = sh.Spec.NewChunks[a][i]
	}
	return shape
}

// placeLocked puts old chunk task's piece b (a piece as on the wire, old
// task's index in the old grid) into new chunk p's assembly a, whose lock
// the caller holds.
func placeLocked(sh *Shuffle, a *assembly, task uint64, old []int, p uint32, b []byte) error {
	if _, err := a.asm.PlaceOldWire(old, b); err != nil {
		code := wire.RefuseBadRequest
		if errors.Is(err, rechunk.ErrPieceDiffers) {
			code = wire.RefuseFailed
		}
		return shuffle.Refuse(code, fmt.Errorf("shuffle %s task %d new chunk %d on node %s: %w", sh.ID(), task, p, sh.Self, err))
	}
	return nil
}

// checkVisible checks that every old chunk placed in a has a committed
// attempt for new chunk p (after the seal every task has one; a piece
// without one would be data no barrier vouched for). Called with a.mu held.
func (a *assembly) checkVisible(sh *Shuffle, p uint32) error {
	grid := sh.Array.Plan.OldGrid()
	for old := range a.asm.PlacedOld() {
		t := uint64(splitaxes.Ravel(old, grid))
		if _, ok := sh.ledger.Committed(t, p); !ok {
			return fmt.Errorf("%w: shuffle %s new chunk %d on node %s: the piece of old chunk %d has no committed attempt",
				shuffle.ErrFailed, sh.ID(), p, sh.Self, t)
		}
	}
	return nil
}
