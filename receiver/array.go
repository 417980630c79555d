package receiver

import (
	"cmp"
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

// placeGroup is the most entries of a message placed together. The entries
// of one message are mostly the old chunks of one sender's tasks, each with
// a piece for many of the same new chunks; placing them new chunk by new
// chunk (placeGroupMerged) touches an assembly, its lock, its placed bits
// and the lines its pieces land on once per group rather than once per
// piece. Each step of the merge scans the group's cursors, so a group is
// kept small enough for that to stay cheap when the entries share no new
// chunk.
const placeGroup = 64

// receiveArrayEntries receives the entries of one message of array shuffle
// sh: each is checked and claimed, then the claimed ones are placed in
// groups (placeGroupMerged) and recorded as stored. An entry refused
// before it was placed ends the message there: the entries before it are
// stored, as when each entry was received on its own. kept says whether
// pieces referencing an entry's data were stored.
func (rc *Receiver) receiveArrayEntries(sh *Shuffle, rt *shuffle.Route, entries []shard.Entry) (kept bool, err error) {
	group := make([]*shard.Entry, 0, min(len(entries), placeGroup))
	for i := 0; i < len(entries); {
		group = group[:0]
		var refused error
		for ; i < len(entries) && len(group) < placeGroup; i++ {
			ok, err := rc.admitArrayEntry(sh, rt, &entries[i])
			if err != nil {
				refused = err
				break
			}
			if ok {
				group = append(group, &entries[i])
			}
		}
		k, err := rc.storeArrayGroup(sh, group)
		kept = kept || k
		if err = cmp.Or(err, refused); err != nil {
			return true, err
		}
	}
	return kept, nil
}

// admitArrayEntry checks e and claims it; false (and no error) when it was
// seen before.
func (rc *Receiver) admitArrayEntry(sh *Shuffle, rt *shuffle.Route, e *shard.Entry) (bool, error) {
	if err := sh.checkEntry(rt, e); err != nil {
		return false, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	if !sh.claim(e, rt.Epoch) {
		return false, nil // a resent entry: already stored
	}
	if err := checkArrayEntry(sh, e); err != nil {
		sh.unclaim(e)
		return false, err
	}
	return true, nil
}

// storeArrayGroup places the pieces of the claimed entries of group and
// stores those that have no assembly, then records each entry as stored.
// An entry that failed is unclaimed and its error returned (the first of
// them); the others are stored all the same.
func (rc *Receiver) storeArrayGroup(sh *Shuffle, group []*shard.Entry) (kept bool, err error) {
	res := rc.placeGroupMerged(sh, group)
	for j, e := range group {
		r := &res[j]
		if r.err == nil && len(r.items) > 0 {
			kept = true
			r.err = rc.putPieces(sh, e, r.items)
		}
		if r.err == nil {
			r.err = rc.stored(sh, e)
		} else {
			sh.unclaim(e)
		}
		err = cmp.Or(err, r.err)
	}
	return kept || err != nil, err
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

// groupResult is what placing one entry of a group left: the pieces to
// store (no assembly took them) and the error that stopped it.
type groupResult struct {
	items []spill.Item
	err   error
}

// placeCursor walks the runs of one entry of a group.
type placeCursor struct {
	e   *shard.Entry
	old []int // the entry's old chunk
	run int
	off uint64
	res *groupResult
}

// partition is the new chunk of the cursor's next piece.
func (c *placeCursor) partition() uint32 { return c.e.Runs[c.run].Partition }

// next returns the cursor's next piece, with its header, as stored, and
// moves past it. Stored pieces alias the frame's payload (ours to keep,
// see dht.Handler; entries are aligned in it).
func (c *placeCursor) next() []byte {
	n := c.e.Runs[c.run].Count
	b := c.e.Data[c.off : c.off+n : c.off+n]
	c.off += n
	c.run++
	return b
}

// done reports whether the cursor has no piece left.
func (c *placeCursor) done() bool { return c.res.err != nil || c.run == len(c.e.Runs) }

// placeGroupMerged places the pieces of group (checked by checkArrayEntry)
// new chunk by new chunk: each step takes the lowest new chunk any entry's
// next piece is for, and places every entry's piece for it under one hold
// of its assembly. Pieces whose new chunk has no assembly (the budget had
// no room, or sizes are unknown until the data comes) are returned to be
// stored. An entry whose piece is refused stops there; the others go on.
func (rc *Receiver) placeGroupMerged(sh *Shuffle, group []*shard.Entry) []groupResult {
	res := make([]groupResult, len(group))
	live := make([]placeCursor, 0, len(group))
	grid := sh.Array.Plan.OldGrid()
	for j, e := range group {
		if len(e.Runs) > 0 {
			live = append(live, placeCursor{e: e, old: splitaxes.Unravel(int(e.Task), grid), res: &res[j]})
		}
	}
	onArrival := assembleOnArrival(sh)
	for len(live) > 0 {
		p := live[0].partition()
		for i := 1; i < len(live); i++ {
			p = min(p, live[i].partition())
		}
		var a *assembly
		if onArrival {
			a = rc.assembly(sh, p)
		}
		if a != nil {
			a.mu.Lock()
		}
		for i := range live {
			c := &live[i]
			if c.partition() != p {
				continue
			}
			b := c.next()
			if a == nil {
				k := spill.Key{Partition: p, Task: c.e.Task, Attempt: c.e.Attempt, Seq: c.e.Seq}
				c.res.items = append(c.res.items, spill.Item{Key: k, Value: bytesValue(b)})
				continue
			}
			c.res.err = placeLocked(sh, a, c.e.Task, c.old, p, b)
		}
		if a != nil {
			a.mu.Unlock()
		}
		live = slices.DeleteFunc(live, func(c placeCursor) bool { return c.done() })
	}
	return res
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
