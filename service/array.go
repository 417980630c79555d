package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// PutChunk runs one input task attempt of an array shuffle: old chunk task
// (C-order index into the old grid) with its bytes. The chunk's dtype and
// shape must be the spec's (unknown-size axes take the chunk's own size).
func (s *Service) PutChunk(ctx context.Context, id string, task uint64, attempt uint32, c rechunk.Chunk) (PutResult, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return PutResult{}, err
	}
	if sh.Array == nil {
		return PutResult{}, fmt.Errorf("%w: shuffle %s is a %s shuffle, not an array rechunk", ErrBadInput, id, sh.Spec.Kind)
	}
	if err := sh.checkChunk(task, c); err != nil {
		return PutResult{}, err
	}
	return s.putWith(ctx, sh, task, attempt, func(p *putter) error { return badInputOr(p.cut.Chunk(ctx, sh.Array.Plan, c)) })
}

// checkChunk refuses a chunk of the wrong dtype, shape or byte length.
func (sh *entry) checkChunk(task uint64, c rechunk.Chunk) error {
	if task >= uint64(sh.Spec.Tasks) {
		return fmt.Errorf("%w: shuffle %s: task %d out of range 0..%d", ErrBadInput, sh.ID(), task, sh.Spec.Tasks-1)
	}
	idx := splitaxes.Unravel(int(task), sh.Array.Plan.OldGrid())
	want := make([]int64, len(idx))
	for a, i := range idx {
		want[a] = sh.Spec.OldChunks[a][i]
		if want[a] == splitaxes.Unknown && a < len(c.Shape) {
			want[a] = c.Shape[a] // unknown until the data arrives
		}
	}
	if c.DType != sh.Array.DType || !slices.Equal(c.Shape, want) || c.Validate() != nil {
		return fmt.Errorf("%w: shuffle %s task %d (old chunk %v): got dtype %s shape %v (%d bytes), want dtype %s shape %v",
			ErrBadInput, sh.ID(), task, idx, c.DType, c.Shape, len(c.Data), sh.Array.DType, want)
	}
	return nil
}

// storeArrayEntry stores each piece of an entry under its new chunk.
func (s *Service) storeArrayEntry(sh *entry, e *shard.Entry) error {
	data := append([]byte(nil), e.Data...) // the frame's buffer is not ours to keep
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
	if sh.Array == nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", ErrBadInput, id)
	}
	plan := sh.Array.Plan
	newIdx := splitaxes.Unravel(p, plan.NewGrid())
	asm, err := rechunk.NewAssembler(plan, newIdx, sh.Array.DType, rechunk.Config{})
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
func placePiece(asm *rechunk.Assembler, sh *entry, k spill.Key, b []byte, plan *splitaxes.Plan) error {
	c, err := rechunk.DecodePiece(b, sh.Array.DType)
	if err != nil {
		return err
	}
	return asm.PlaceOld(splitaxes.Unravel(int(k.Task), plan.OldGrid()), c)
}
