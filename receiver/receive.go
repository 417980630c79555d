package receiver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

// HandlePayload receives one shards message from the network: b is the
// frame's payload, which the receiver takes over (see dht.Handler). It
// decodes the message, finds its shuffle with Config.Lookup and receives
// it (Receive); once no piece it stored still refers to b (every entry was
// copied out), b goes back to the network's pool (wire.Recycle). The
// caller must not use b afterwards. An error is what to reply: a
// *shuffle.Refusal (a malformed message, an unknown shuffle...), a
// *shuffle.Busy, or a failure; a failure of the spill disk is also
// reported to Config.DiskFailed.
func (rc *Receiver) HandlePayload(ctx context.Context, b []byte) error {
	m, err := shard.Decode(b)
	if err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	sh, err := rc.cfg.Lookup(m.Shuffle)
	if err != nil {
		return shuffle.Refuse(wire.RefuseUnknownShuffle, err)
	}
	kept, err := rc.receiveKept(ctx, sh, m)
	if errors.Is(err, spill.ErrDisk) {
		rc.cfg.DiskFailed(sh.State, err)
	}
	if err == nil && !kept {
		wire.Recycle(b)
	}
	return err
}

// Receive handles a shards message of sh: store its entries, then its end
// markers. It blocks while the spill store writes to disk (back-pressure on
// the sender). An error is a *shuffle.Refusal or *shuffle.Busy to reply
// with, or the store's failure. The receiver keeps slices of the entries'
// data (it decodes and stores them in place): the caller hands m's bytes
// over and must not reuse them.
func (rc *Receiver) Receive(ctx context.Context, sh *Shuffle, m *shard.Msg) error {
	_, err := rc.receiveKept(ctx, sh, m)
	return err
}

// receiveKept is Receive that also reports whether the receiver kept
// references to the bytes of m's entries (pieces stored as they arrived).
// When it did not and err is nil, every entry was copied out (accumulated,
// assembled, or a resent one dropped), so the buffer m was decoded from
// may be reused (wire.Recycle). After an error it reports true.
func (rc *Receiver) receiveKept(ctx context.Context, sh *Shuffle, m *shard.Msg) (kept bool, err error) {
	if err := sh.enter(); err != nil {
		return true, shuffle.Refuse(wire.RefuseSealed, err)
	}
	defer sh.exit()
	sh.Touch()
	rt := sh.Route()
	if err := rc.checkEpoch(sh, rt, m.Epoch); err != nil {
		return true, err
	}
	if err := sh.OpenErr(); err != nil {
		return true, shuffle.Refuse(wire.RefuseSealed, err)
	}
	receive := rc.receiveEntries
	if sh.Array != nil {
		receive = rc.receiveArrayEntries
	}
	if kept, err = receive(sh, rt, m.Entries); err != nil {
		return true, err
	}
	for _, e := range m.Ends {
		if err := rc.receiveEnd(sh, rt, e); err != nil {
			return true, err
		}
	}
	return kept, nil
}

// checkEpoch refuses a message of an older epoch for good and asks a sender
// that is ahead of this node (it applied a newer epoch first) to retry.
func (rc *Receiver) checkEpoch(sh *Shuffle, rt *shuffle.Route, epoch uint64) error {
	switch {
	case epoch < rt.Epoch:
		return shuffle.Refuse(wire.RefuseStaleEpoch, fmt.Errorf("shuffle %s: message of epoch %d, node %s is at epoch %d", sh.ID(), epoch, sh.Self, rt.Epoch))
	case epoch > rt.Epoch:
		return &shuffle.Busy{After: 20 * time.Millisecond, Err: fmt.Errorf("shuffle %s: node %s is still at epoch %d (message of %d)", sh.ID(), sh.Self, rt.Epoch, epoch)}
	}
	return nil
}

// receiveEntries receives the entries of one message of dataframe shuffle
// sh in turn; the first refused ends the message there.
func (rc *Receiver) receiveEntries(sh *Shuffle, rt *shuffle.Route, entries []shard.Entry) (kept bool, err error) {
	for i := range entries {
		k, err := rc.receiveEntry(sh, rt, &entries[i])
		if err != nil {
			return true, err
		}
		kept = kept || k
	}
	return kept, nil
}

// receiveEntry stores one entry's pieces unless it was seen before; kept
// says whether pieces referencing e.Data were stored.
func (rc *Receiver) receiveEntry(sh *Shuffle, rt *shuffle.Route, e *shard.Entry) (kept bool, err error) {
	if err := sh.checkEntry(rt, e); err != nil {
		return false, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	if !sh.claim(e, rt.Epoch) {
		return false, nil // a resent entry: already stored
	}
	if kept, err = rc.storeEntry(sh, e); err != nil {
		sh.unclaim(e)
		return true, err
	}
	return kept, rc.stored(sh, e)
}

// checkEntry refuses an entry for a task out of range or a partition this
// node does not own in the entry's epoch.
func (sh *Shuffle) checkEntry(rt *shuffle.Route, e *shard.Entry) error {
	if e.Task >= uint64(sh.Spec.Tasks) {
		return fmt.Errorf("shuffle %s: task %d out of range", sh.ID(), e.Task)
	}
	for _, r := range e.Runs {
		if int(r.Partition) >= sh.Spec.Partitions || !rt.Held.Has(int(r.Partition)) {
			return fmt.Errorf("%w: shuffle %s task %d: partition %d", shuffle.ErrNotOwner, sh.ID(), e.Task, r.Partition)
		}
	}
	return nil
}

// claim marks e (of an attempt running in epoch) as being stored; false
// if it was seen before.
func (sh *Shuffle) claim(e *shard.Entry, epoch uint64) bool {
	sh.Lock()
	defer sh.Unlock()
	rs := sh.attempt(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt})
	if rs.seen[e.Seq] {
		return false
	}
	rs.seen[e.Seq] = true
	rs.epoch = epoch
	return true
}

func (sh *Shuffle) unclaim(e *shard.Entry) {
	sh.Lock()
	defer sh.Unlock()
	delete(sh.attempt(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}).seen, e.Seq)
}

func (sh *Shuffle) attempt(k shuffle.AttemptKey) *attempt {
	rs, ok := sh.recv[k]
	if !ok {
		rs = &attempt{seen: map[uint32]bool{}}
		sh.recv[k] = rs
	}
	return rs
}

// storeEntry decodes an entry and appends its rows to their partitions'
// accumulators, or, where the budget has no room for that, stores one piece
// per output partition (kept: the pieces reference e.Data).
func (rc *Receiver) storeEntry(sh *Shuffle, e *shard.Entry) (kept bool, err error) {
	data := e.Data // the frame's payload is ours to keep (see dht.Handler); entries are aligned in it
	rec, err := sh.Codec.Decode(data)
	if err != nil {
		return false, shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: %w", sh.ID(), e.Task, err))
	}
	defer rec.Release()
	if err := checkRuns(sh, e, rec); err != nil {
		return false, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	cols := table.ViewOf(rec) // resolved once, shared by the entry's pieces
	if rc.stageEntry(sh, e, rec, cols) {
		return true, nil // the staged record refers to e.Data
	}
	ok, err := rc.accumulate(sh, e, rec, cols)
	if err != nil {
		return false, shuffle.Refuse(wire.RefuseFailed, fmt.Errorf("shuffle %s task %d on node %s: %w", sh.ID(), e.Task, sh.Self, err))
	}
	if ok {
		return false, nil
	}
	pieces := make([]piece, len(e.Runs)) // one allocation for the entry's pieces
	items := make([]spill.Item, len(e.Runs))
	var off int64
	for i, r := range e.Runs {
		rec.Retain()
		v := &pieces[i]
		*v = piece{rec: rec, cols: cols, off: off, rows: int64(r.Count), codec: sh.Codec}
		v.size = pieceOverhead + int64(len(data))*int64(r.Count)/max(rec.NumRows(), 1)
		off += int64(r.Count)
		items[i] = spill.Item{Key: spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}, Value: v}
	}
	return true, rc.putPieces(sh, e, items)
}

// putPieces stores the pieces of one entry. A duplicate (a resent entry
// whose first copy was stored) is released and skipped; on any other error
// the store took none of them and all are released.
func (rc *Receiver) putPieces(sh *Shuffle, e *shard.Entry, items []spill.Item) error {
	err := rc.cfg.Store.PutMany(sh.ID(), items, func(i int) { items[i].Value.Release() })
	if err != nil {
		for _, it := range items {
			it.Value.Release()
		}
		return shuffle.Refuse(wire.RefuseFailed, fmt.Errorf("shuffle %s task %d on node %s: %w", sh.ID(), e.Task, sh.Self, err))
	}
	return nil
}

// checkRuns checks that the runs cover the record's rows exactly.
func checkRuns(sh *Shuffle, e *shard.Entry, rec arrow.Record) error {
	var n uint64
	for _, r := range e.Runs {
		n += r.Count
	}
	if n != uint64(rec.NumRows()) {
		return fmt.Errorf("shuffle %s task %d: runs cover %d rows, record has %d", sh.ID(), e.Task, n, rec.NumRows())
	}
	return nil
}
