package service

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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

// arrayEntryBytes is the size at which a destination's pieces of one old
// chunk are handed to the splitter as one entry.
const arrayEntryBytes = 1 << 20

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
	return s.putWith(ctx, sh, task, attempt, func(p *putter) error { return p.cutChunk(ctx, c) })
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

// cutChunk cuts an old chunk into its ndsplits, lazily, and hands them to
// the splitter as entries of about arrayEntryBytes per destination. Each
// piece is self-describing: its shape (uvarint ndim, then extents) and its
// C-order bytes.
func (p *putter) cutChunk(ctx context.Context, c rechunk.Chunk) error {
	plan := p.sh.array.plan
	splits, err := plan.NDSplits(splitaxes.Unravel(int(p.k.task), plan.OldGrid()))
	if err != nil {
		return err
	}
	bufs := make([][]byte, len(p.sh.members))
	runs := make([][]shard.Run, len(p.sh.members))
	for nd := range splits {
		part := splitaxes.Ravel(nd.NewChunk, plan.NewGrid())
		for _, dest := range p.destinations(part) {
			start := len(bufs[dest])
			bufs[dest] = appendShape(bufs[dest], pieceShape(nd.Slices, c.Shape))
			if bufs[dest], _, err = rechunk.AppendCut(bufs[dest], c, nd.Slices); err != nil {
				return fmt.Errorf("shuffle %s task %d: cutting new chunk %v: %w", p.sh.id(), p.k.task, nd.NewChunk, err)
			}
			runs[dest] = append(runs[dest], shard.Run{Partition: uint32(part), Count: uint64(len(bufs[dest]) - start)})
			if len(bufs[dest]) >= arrayEntryBytes {
				if err := p.sendBytes(ctx, dest, bufs[dest], runs[dest]); err != nil {
					return err
				}
				bufs[dest], runs[dest] = nil, nil
			}
		}
	}
	for dest := range bufs {
		if len(runs[dest]) > 0 {
			if err := p.sendBytes(ctx, dest, bufs[dest], runs[dest]); err != nil {
				return err
			}
		}
	}
	return nil
}

// destinations are the member indexes a piece of partition part goes to:
// its owner, and its backup with replication 2 (either left out where a
// replay need not send it, see sendOnlyMoved).
func (p *putter) destinations(part int) []int {
	none := len(p.sh.members)
	out := make([]int, 0, 2)
	if d := p.primary[part]; d < none {
		out = append(out, d)
	}
	if p.backups != nil && p.backups[part] < none {
		out = append(out, p.backups[part])
	}
	return out
}

// sendBytes hands one entry of array pieces to the splitter; its "rows"
// are its bytes, as the receiver counts them.
func (p *putter) sendBytes(ctx context.Context, dest int, data []byte, runs []shard.Run) error {
	e := shard.Entry{Task: p.k.task, Attempt: p.k.attempt, Seq: p.seq[dest], Runs: runs, Data: data}
	p.seq[dest]++
	p.sent[dest].Add(uint64(len(data)), uint64(len(data)), crc32.Checksum(data, castagnoli))
	return p.s.split.Add(ctx, p.sh.id(), p.rt.epoch, p.sh.members[dest], e)
}

// pieceShape is the shape of an ndsplit of a chunk of shape (open-ended
// slices run to the chunk's end).
func pieceShape(sl []splitaxes.Slice, shape []int64) []int64 {
	out := make([]int64, len(sl))
	for a, r := range sl {
		stop := r.Stop
		if stop == splitaxes.Unknown {
			stop = shape[a]
		}
		out[a] = stop - r.Start
	}
	return out
}

func appendShape(b []byte, shape []int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(shape)))
	for _, n := range shape {
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

// decodePiece splits a stored piece into its shape and bytes, checking the
// byte length against the shape.
func decodePiece(b []byte, dt rechunk.DType) (rechunk.Chunk, error) {
	d := wire.NewDecoder(b, len(b))
	n := d.Count(32)
	shape := make([]int64, n)
	elems := int64(1)
	for a := range shape {
		shape[a] = int64(d.Uvarint())
		if shape[a] < 0 || (shape[a] != 0 && elems > (1<<62)/shape[a]) {
			return rechunk.Chunk{}, fmt.Errorf("%w: piece shape overflows", ErrBadInput)
		}
		elems *= shape[a]
	}
	if err := d.Err(); err != nil {
		return rechunk.Chunk{}, err
	}
	data := b[len(b)-d.Remaining():]
	if int64(len(data)) != elems*int64(dt.ItemSize()) {
		return rechunk.Chunk{}, fmt.Errorf("%w: piece of shape %v has %d bytes, want %d", ErrBadInput, shape, len(data), elems*int64(dt.ItemSize()))
	}
	return rechunk.Chunk{DType: dt, Shape: shape, Data: data}, nil
}

// storeArrayEntry stores each piece of an entry under its new chunk.
func (s *Service) storeArrayEntry(sh *shuffle, e *shard.Entry) error {
	data := append([]byte(nil), e.Data...) // the frame's buffer is not ours to keep
	var off uint64
	for _, r := range e.Runs {
		if off+r.Count > uint64(len(data)) {
			return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d+ bytes of %d", sh.id(), e.Task, off+r.Count, len(data)))
		}
		b := data[off : off+r.Count : off+r.Count]
		off += r.Count
		if _, err := decodePiece(b, sh.array.dtype); err != nil {
			return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d new chunk %d: %w", sh.id(), e.Task, r.Partition, err))
		}
		k := spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}
		if err := s.store.Put(sh.id(), k, bytesValue(b)); err != nil && !errors.Is(err, spill.ErrDuplicate) {
			return refuse(wire.RefuseFailed, fmt.Errorf("shuffle %s task %d on node %s: %w", sh.id(), e.Task, s.Name(), err))
		}
	}
	if off != uint64(len(data)) {
		return refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: runs cover %d of %d bytes", sh.id(), e.Task, off, len(data)))
	}
	return nil
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
	c, err := decodePiece(b, sh.array.dtype)
	if err != nil {
		return err
	}
	return asm.PlaceOld(splitaxes.Unravel(int(k.Task), plan.OldGrid()), c)
}
