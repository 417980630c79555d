package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// arrayKind is what an array shuffle needs on every node.
type arrayKind struct {
	plan  *splitaxes.Plan
	dtype rechunk.DType
}

// PutChunk runs one input task attempt of an array shuffle: old chunk task
// (C-order index into the old grid) with its bytes. The chunk's dtype and
// shape must be the spec's (unknown-size axes take the chunk's own size).
func (s *Service) PutChunk(ctx context.Context, id string, task uint64, attempt uint32, c rechunk.Chunk) (PutResult, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return PutResult{}, err
	}
	if sh.array == nil {
		return PutResult{}, fmt.Errorf("%w: shuffle %s is a %s shuffle, not an array rechunk", ErrBadInput, id, sh.spec.Kind)
	}
	if err := sh.checkChunk(task, c); err != nil {
		return PutResult{}, err
	}
	return s.putWith(ctx, sh, task, attempt, func(p *putter) error { return badInputOr(p.cut.Chunk(ctx, sh.array.plan, c)) })
}

// checkChunk refuses a chunk of the wrong dtype, shape or byte length.
func (sh *shuffle) checkChunk(task uint64, c rechunk.Chunk) error {
	if task >= uint64(sh.spec.Tasks) {
		return fmt.Errorf("%w: shuffle %s: task %d out of range 0..%d", ErrBadInput, sh.id(), task, sh.spec.Tasks-1)
	}
	idx := splitaxes.Unravel(int(task), sh.array.plan.OldGrid())
	want := make([]int64, len(idx))
	for a, i := range idx {
		want[a] = sh.spec.OldChunks[a][i]
		if want[a] == splitaxes.Unknown && a < len(c.Shape) {
			want[a] = c.Shape[a] // unknown until the data arrives
		}
	}
	if c.DType != sh.array.dtype || !slices.Equal(c.Shape, want) || c.Validate() != nil {
		return fmt.Errorf("%w: shuffle %s task %d (old chunk %v): got dtype %s shape %v (%d bytes), want dtype %s shape %v",
			ErrBadInput, sh.id(), task, idx, c.DType, c.Shape, len(c.Data), sh.array.dtype, want)
	}
	return nil
}

// storeArrayEntry stores each piece of an entry under its new chunk.
func (s *Service) storeArrayEntry(sh *shuffle, e *shard.Entry) error {
	data := e.Data // the frame's payload is ours to keep (see dht.Handler); entries are aligned in it
	items := make([]spill.Item, 0, len(e.Runs))
	var off uint64
	for _, r := range e.Runs {
		if off+r.Count > uint64(len(data)) {
			return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d+ bytes of %d", sh.id(), e.Task, off+r.Count, len(data)))
		}
		b := data[off : off+r.Count : off+r.Count]
		off += r.Count
		if _, err := rechunk.DecodePiece(b, sh.array.dtype); err != nil {
			return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d new chunk %d: %w", sh.id(), e.Task, r.Partition, err))
		}
		k := spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}
		items = append(items, spill.Item{Key: k, Value: bytesValue(b)})
	}
	if off != uint64(len(data)) {
		return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d of %d bytes", sh.id(), e.Task, off, len(data)))
	}
	return s.putPieces(sh, e, items)
}

// bytesValue is an array piece held in memory.
type bytesValue []byte

func (b bytesValue) Size() int64                   { return int64(len(b)) }
func (b bytesValue) MarshalSpill() ([]byte, error) { return b, nil }
func (b bytesValue) Release()                      {}

// GetChunk assembles new chunk p (C-order index into the new grid) of an
// array shuffle on its owner, after the barrier: every committed piece is
// placed straight into one buffer of the chunk's final size. A missing or
// misfit piece is an error naming it: nothing is filled in silently.
func (s *Service) GetChunk(ctx context.Context, id string, p int) (rechunk.Chunk, error) {
	sh, err := s.readable(id, p)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	if sh.array == nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", ErrBadInput, id)
	}
	plan := sh.array.plan
	newIdx := splitaxes.Unravel(p, plan.NewGrid())
	asm, err := rechunk.NewAssembler(plan, newIdx, sh.array.dtype, rechunk.Config{})
	if err != nil {
		return rechunk.Chunk{}, err
	}
	err = s.store.Scan(id, uint32(p), func(k spill.Key, mem spill.Value, disk []byte) error {
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
		return rechunk.Chunk{}, fmt.Errorf("shuffle %s new chunk %v on node %s: %w", id, newIdx, s.Name(), err)
	}
	if !asm.Complete() {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s new chunk %v on node %s: %d of %d pieces placed",
			ErrFailed, id, newIdx, s.Name(), asm.Placed(), asm.Needed())
	}
	return asm.Chunk()
}

// placePiece decodes a stored piece and places it (the assembler copies it).
func placePiece(asm *rechunk.Assembler, sh *shuffle, k spill.Key, b []byte, plan *splitaxes.Plan) error {
	c, err := rechunk.DecodePiece(b, sh.array.dtype)
	if err != nil {
		return err
	}
	return asm.PlaceOld(splitaxes.Unravel(int(k.Task), plan.OldGrid()), c)
}
