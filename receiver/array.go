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

// storeArrayEntry stores each piece of an entry under its new chunk.
func (rc *Receiver) storeArrayEntry(sh *Shuffle, e *shard.Entry) error {
	data := e.Data // the frame's payload is ours to keep (see dht.Handler); entries are aligned in it
	items := make([]spill.Item, 0, len(e.Runs))
	var off uint64
	for _, r := range e.Runs {
		if off+r.Count > uint64(len(data)) {
			return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d+ bytes of %d", sh.ID(), e.Task, off+r.Count, len(data)))
		}
		b := data[off : off+r.Count : off+r.Count]
		off += r.Count
		if _, err := rechunk.DecodePiece(b, sh.Array.DType); err != nil {
			return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d new chunk %d: %w", sh.ID(), e.Task, r.Partition, err))
		}
		k := spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}
		items = append(items, spill.Item{Key: k, Value: bytesValue(b)})
	}
	if off != uint64(len(data)) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d of %d bytes", sh.ID(), e.Task, off, len(data)))
	}
	return rc.putPieces(sh, e, items)
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
	id := sh.ID()
	if err := rc.readable(sh, p); err != nil {
		return rechunk.Chunk{}, err
	}
	if sh.Array == nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", shuffle.ErrBadInput, id)
	}
	plan := sh.Array.Plan
	newIdx := splitaxes.Unravel(p, plan.NewGrid())
	asm, err := rechunk.NewAssembler(plan, newIdx, sh.Array.DType, rechunk.Config{})
	if err != nil {
		return rechunk.Chunk{}, err
	}
	err = rc.cfg.Store.Scan(id, uint32(p), func(k spill.Key, mem spill.Value, disk []byte) error {
		if err := ctx.Err(); err != nil || !sh.ledger.Visible(k.Task, k.Attempt, k.Partition) {
			return err
		}
		b := disk
		if mem != nil {
			b = mem.(bytesValue)
		}
		return placePiece(asm, sh, k, b, plan)
	})
	if err != nil {
		return rechunk.Chunk{}, fmt.Errorf("shuffle %s new chunk %v on node %s: %w", id, newIdx, sh.Self, err)
	}
	if !asm.Complete() {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s new chunk %v on node %s: %d of %d pieces placed",
			shuffle.ErrFailed, id, newIdx, sh.Self, asm.Placed(), asm.Needed())
	}
	return asm.Chunk()
}

// placePiece decodes a stored piece and places it (the assembler copies it).
func placePiece(asm *rechunk.Assembler, sh *Shuffle, k spill.Key, b []byte, plan *splitaxes.Plan) error {
	c, err := rechunk.DecodePiece(b, sh.Array.DType)
	if err != nil {
		return err
	}
	return asm.PlaceOld(splitaxes.Unravel(int(k.Task), plan.OldGrid()), c)
}
