package puts

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// PutChunk runs one input task attempt of an array shuffle: old chunk task
// (C-order index into the old grid) with its bytes. The chunk's dtype and
// shape must be the spec's (unknown-size axes take the chunk's own size).
func (s *Runner) PutChunk(ctx context.Context, id string, task uint64, attempt uint32, c rechunk.Chunk) (PutResult, error) {
	sh, err := s.clientLookup(ctx, id)
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
func (sh *Shuffle) checkChunk(task uint64, c rechunk.Chunk) error {
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
