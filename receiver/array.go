package receiver

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// storeArrayEntry places each piece of an entry into its new chunk's
// assembly, or stores it under the new chunk where there is none. Every
// piece is checked before any is placed or stored.
func (rc *Receiver) storeArrayEntry(sh *Shuffle, e *shard.Entry) (kept bool, err error) {
	if err := checkArrayEntry(sh, e); err != nil {
		return false, err
	}
	items, err := rc.placeAll(sh, e)
	if err != nil {
		return true, err
	}
	return len(items) > 0, rc.putPieces(sh, e, items)
}

// checkArrayEntry checks that the runs of an entry cover its data exactly
// and that each is a well-formed piece. Nothing is kept per piece: with
// pieces of one element, a decoded chunk per piece cost more than the piece.
func checkArrayEntry(sh *Shuffle, e *shard.Entry) error {
	shape := make([]int64, 0, sh.Array.Plan.NDim())
	var off uint64
	for _, r := range e.Runs {
		if r.Count > uint64(len(e.Data))-off {
			return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d+ bytes of %d", sh.ID(), e.Task, off+r.Count, len(e.Data)))
		}
		if _, err := rechunk.DecodePieceTo(shape, e.Data[off:off+r.Count], sh.Array.DType); err != nil {
			return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d new chunk %d: %w", sh.ID(), e.Task, r.Partition, err))
		}
		off += r.Count
	}
	if off != uint64(len(e.Data)) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d of %d bytes", sh.ID(), e.Task, off, len(e.Data)))
	}
	return nil
}

// placeAll places the pieces of e (one per run, checked by
// checkArrayEntry) that have an assembly and returns the items of the
// others, to store. Stored pieces alias the frame's payload (ours to keep,
// see dht.Handler; entries are aligned in it).
func (rc *Receiver) placeAll(sh *Shuffle, e *shard.Entry) ([]spill.Item, error) {
	var items []spill.Item
	onArrival := assembleOnArrival(sh)
	old := splitaxes.Unravel(int(e.Task), sh.Array.Plan.OldGrid())
	shape := make([]int64, 0, len(old))
	var off uint64
	for _, r := range e.Runs {
		b := e.Data[off : off+r.Count : off+r.Count] // the piece with its header, as stored
		off += r.Count
		if onArrival {
			c, err := rechunk.DecodePieceTo(shape, b, sh.Array.DType)
			if err != nil {
				return nil, shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d new chunk %d: %w", sh.ID(), e.Task, r.Partition, err))
			}
			ok, err := rc.place(sh, e.Task, old, r.Partition, c)
			if err != nil {
				return nil, err
			}
			if ok {
				continue
			}
		}
		k := spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}
		items = append(items, spill.Item{Key: k, Value: bytesValue(b)})
	}
	return items, nil
}

// bytesValue is an array piece held in memory.
type bytesValue []byte

func (b bytesValue) Size() int64                   { return int64(len(b)) }
func (b bytesValue) MarshalSpill() ([]byte, error) { return b, nil }
func (b bytesValue) Release()                      {}

// GetChunk assembles new chunk p (C-order index into the new grid) of
// array shuffle sh on its owner, after the barrier: every committed piece is
// placed straight into one buffer of the chunk's final size. A missing or
// misfit piece is an error naming it: nothing is filled in silently.
func (rc *Receiver) GetChunk(ctx context.Context, sh *Shuffle, p int) (rechunk.Chunk, error) {
	c, err := rc.getChunk(ctx, sh, p)
	if err == nil {
		sh.out.add(1, int64(len(c.Data)))
		sh.out.reads.Add(1)
	}
	return c, err
}

// getChunk is GetChunk without the counting.
func (rc *Receiver) getChunk(ctx context.Context, sh *Shuffle, p int) (rechunk.Chunk, error) {
	id := sh.ID()
	if err := rc.readable(sh, p); err != nil {
		return rechunk.Chunk{}, err
	}
	if sh.Array == nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", shuffle.ErrBadInput, id)
	}
	plan := sh.Array.Plan
	newIdx := splitaxes.Unravel(p, plan.NewGrid())
	if a := sh.assembled(uint32(p)); a != nil {
		return rc.finishAssembly(ctx, sh, a, p)
	}
	asm, err := rechunk.NewAssembler(plan, newIdx, sh.Array.DType, rechunk.Config{})
	if err != nil {
		return rechunk.Chunk{}, err
	}
	if err := rc.placeStored(ctx, sh, asm, p); err != nil {
		return rechunk.Chunk{}, fmt.Errorf("shuffle %s new chunk %v on node %s: %w", id, newIdx, sh.Self, err)
	}
	if !asm.Complete() {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s new chunk %v on node %s: %d of %d pieces placed",
			shuffle.ErrFailed, id, newIdx, sh.Self, asm.Placed(), asm.Needed())
	}
	return asm.Chunk()
}

// finishAssembly completes new chunk p from its assembly: the pieces that
// were stored rather than placed (the budget had no room then) are placed
// now, and every placed piece must have a committed attempt. The chunk
// shares the assembly's buffer.
func (rc *Receiver) finishAssembly(ctx context.Context, sh *Shuffle, a *assembly, p int) (rechunk.Chunk, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := rc.placeStored(ctx, sh, a.asm, p); err != nil {
		return rechunk.Chunk{}, fmt.Errorf("shuffle %s new chunk %d on node %s: %w", sh.ID(), p, sh.Self, err)
	}
	if err := a.checkVisible(sh, uint32(p)); err != nil {
		return rechunk.Chunk{}, err
	}
	if !a.asm.Complete() {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s new chunk %d on node %s: %d of %d pieces placed",
			shuffle.ErrFailed, sh.ID(), p, sh.Self, a.asm.Placed(), a.asm.Needed())
	}
	return a.asm.Chunk()
}

// placeStored places the committed pieces of new chunk p held in the store
// (a piece already placed must have the same bytes).
func (rc *Receiver) placeStored(ctx context.Context, sh *Shuffle, asm *rechunk.Assembler, p int) error {
	return rc.cfg.Store.Scan(sh.ID(), uint32(p), func(k spill.Key, mem spill.Value, disk []byte) error {
		if err := ctx.Err(); err != nil || !sh.ledger.Visible(k.Task, k.Attempt, k.Partition) {
			return err
		}
		b := disk
		if mem != nil {
			b = mem.(bytesValue)
		}
		c, err := rechunk.DecodePiece(b, sh.Array.DType)
		if err != nil {
			return err
		}
		_, err = asm.PlaceOldOnce(splitaxes.Unravel(int(k.Task), sh.Array.Plan.OldGrid()), c)
		return err
	})
}
