package receiver

import (
	"context"
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

// Handover (a drain): the node that leaves reads out the committed data
// of each output partition it held (Export) and sends it to the partition's
// new owner, which stores it and commits it under its original key
// (Adopt). Each entry handed over is one (task, attempt, seq) piece of one
// partition, so the new owner's ledger decides per (task, partition) as
// for any attempt: the first committed wins, and a copy of what it has
// already is dropped by ID.

// ErrHandOver: a handover message is not well formed (an entry with other
// than one run) or its shuffle is an array rechunk.
var ErrHandOver = fmt.Errorf("receiver: bad handover")

// Export calls emit with each committed piece of output partition p of
// sh held here (accumulated, in memory or spilled), in key order, as an
// entry of one run keyed by its original task, attempt and seq, its data
// Arrow IPC, with the row sum of its (task, attempt) for p (what the
// sender's end marker said, see shard.End.Sums). emit owns the entry. It does not check that this node owns p: a node
// that drains exports the partitions it owned in an epoch it has left.
// Dataframe shuffles only (ErrHandOver for arrays).
func (rc *Receiver) Export(ctx context.Context, sh *Shuffle, p uint32, emit func(shard.Entry, shard.PartSum) error) error {
	if sh.Array != nil {
		return fmt.Errorf("%w: shuffle %s is an array rechunk", ErrHandOver, sh.ID())
	}
	x := &exporter{sh: sh, p: p, emit: emit}
	x.recs, _, x.segs = sh.snapshot(p)
	defer releaseAll(x.recs)
	defer runtime.KeepAlive(sh) // the accumulated rows live as long as sh (offheap)
	err := rc.cfg.Store.Scan(sh.ID(), p, func(k spill.Key, mem spill.Value, disk []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.segsBefore(&k); err != nil || !sh.visible(k.Task, k.Attempt, p) {
			return err
		}
		data, rows, err := exportPiece(sh, mem, disk)
		if err != nil {
			return fmt.Errorf("shuffle %s partition %d task %d on node %s: %w", sh.ID(), p, k.Task, sh.Self, err)
		}
		return x.send(k.Task, k.Attempt, k.Seq, rows, data)
	})
	if err != nil {
		return err
	}
	return x.segsBefore(nil)
}

// exporter merges a partition's accumulated segments into the store's
// pieces in key order, as a read does (accMerge), so that the pieces of
// one (task, attempt) come one after the other.
type exporter struct {
	sh   *Shuffle
	p    uint32
	emit func(shard.Entry, shard.PartSum) error
	recs []arrow.Record
	segs []accSeg
	next int
}

// segsBefore emits the committed segments whose keys are below k (all
// that are left when k is nil).
func (x *exporter) segsBefore(k *spill.Key) error {
	for ; x.next < len(x.segs); x.next++ {
		s := x.segs[x.next]
		if k != nil && s.key(x.p).Compare(*k) >= 0 {
			return nil
		}
		if !x.sh.visible(s.task, s.attempt, x.p) {
			continue
		}
		rows := table.Slice(x.recs[s.chunk], s.off, int64(s.rows))
		data, err := x.sh.Codec.AppendRecord(nil, rows)
		rows.Release()
		if err != nil {
			return fmt.Errorf("shuffle %s partition %d task %d on node %s: %w", x.sh.ID(), x.p, s.task, x.sh.Self, err)
		}
		if err := x.send(s.task, s.attempt, s.seq, uint64(s.rows), data); err != nil {
			return err
		}
	}
	return nil
}

// send emits one piece with its (task, attempt)'s row sum.
func (x *exporter) send(task uint64, attempt, seq uint32, rows uint64, data []byte) error {
	return x.emit(pieceEntry(task, attempt, seq, x.p, rows, data), x.sh.partSum(task, attempt, x.p))
}

// partSum is the row sum of (task, attempt) for partition p here: what
// its end marker said, or what the handover it came in said.
func (sh *Shuffle) partSum(task uint64, attempt, p uint32) shard.PartSum {
	sh.Lock()
	defer sh.Unlock()
	if s, ok := sh.adopted[adoptKey{task, attempt, p}]; ok {
		return s
	}
	if rs, ok := sh.recv[shuffle.AttemptKey{Task: task, Attempt: attempt}]; ok && rs.end != nil {
		return sumOf(rs.end.Sums, p)
	}
	return shard.PartSum{Partition: p}
}

// exportPiece returns a stored piece's rows as Arrow IPC and their count.
func exportPiece(sh *Shuffle, mem spill.Value, disk []byte) ([]byte, uint64, error) {
	if mem != nil {
		pc := mem.(*piece)
		data, err := pc.MarshalSpill()
		return data, uint64(pc.rows), err
	}
	data := append([]byte(nil), disk...)
	rec, err := sh.Codec.Decode(data)
	if err != nil {
		return nil, 0, err
	}
	defer rec.Release()
	return data, uint64(rec.NumRows()), nil
}

func pieceEntry(task uint64, attempt, seq, p uint32, rows uint64, data []byte) shard.Entry {
	return shard.Entry{Task: task, Attempt: attempt, Seq: seq, Runs: []shard.Run{{Partition: p, Count: rows}}, Data: data}
}

// visible reports, under the shuffle's lock, whether (task, attempt)'s
// data of partition p is committed here.
func (sh *Shuffle) visible(task uint64, attempt, p uint32) bool {
	sh.Lock()
	defer sh.Unlock()
	return sh.ledger.Visible(task, attempt, p)
}

// Adopted is what Adopt did with a handover message.
type Adopted struct {
	// Entries and Bytes were stored and committed; Dropped entries were
	// not, their (task, partition) being committed here already.
	Entries, Dropped int
	Bytes            int64
}

// Adopt stores and commits the entries of m, a handover message of sh's
// epoch m.Epoch (see Export): each entry is one piece of one partition
// this node owns in that epoch, and every piece of one (task, attempt,
// partition) is in the same message, with an end marker of that (task,
// attempt) whose one row sum is the partition's (kept to check later
// attempts against, as for an attempt committed here). A (task, partition) committed here
// already is dropped by ID; the others are committed for their attempt
// once all their pieces are stored. It blocks while the spill store
// writes. An error is a *shuffle.Refusal or *shuffle.Busy to reply with
// (a sender ahead of this node's epoch is asked to retry), or the store's
// failure; the entries stored before it stay uncommitted, and a retry
// stores each once.
func (rc *Receiver) Adopt(ctx context.Context, sh *Shuffle, m *shard.Msg) (Adopted, error) {
	if err := sh.enter(); err != nil {
		return Adopted{}, shuffle.Refuse(wire.RefuseSealed, err)
	}
	defer sh.exit()
	sh.Touch()
	rt := sh.Route()
	if err := rc.checkAdopt(sh, rt, m); err != nil {
		return Adopted{}, err
	}
	var a Adopted
	fresh := map[adoptKey]bool{}
	for i := range m.Entries {
		e := &m.Entries[i]
		k := adoptKey{e.Task, e.Attempt, e.Runs[0].Partition}
		if sh.committedHere(e.Task, k.p) {
			a.Dropped++
			continue
		}
		if err := rc.adoptEntry(sh, e); err != nil {
			return a, err
		}
		fresh[k] = true
		a.Entries++
		a.Bytes += int64(len(e.Data))
	}
	sh.commitAdopted(fresh, handedSums(m))
	return a, nil
}

// handedSums are the row sums of a handover message's (task, attempt,
// partition)s, from its end markers.
func handedSums(m *shard.Msg) map[adoptKey]shard.PartSum {
	out := make(map[adoptKey]shard.PartSum, len(m.Ends))
	for _, e := range m.Ends {
		for _, s := range e.Sums {
			out[adoptKey{e.Task, e.Attempt, s.Partition}] = s
		}
	}
	return out
}

// adoptKey is one (task, attempt, partition) handed over.
type adoptKey struct {
	task    uint64
	attempt uint32
	p       uint32
}

// checkAdopt checks a handover message against this node's epoch and what
// it owns in it.
func (rc *Receiver) checkAdopt(sh *Shuffle, rt *shuffle.Route, m *shard.Msg) error {
	if sh.Array != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("%w: shuffle %s is an array rechunk", ErrHandOver, sh.ID()))
	}
	if err := rc.checkEpoch(sh, rt, m.Epoch); err != nil {
		return err
	}
	if err := sh.OpenErr(); err != nil {
		return shuffle.Refuse(wire.RefuseSealed, err)
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		if len(e.Runs) != 1 {
			return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("%w: shuffle %s task %d: an entry of %d runs", ErrHandOver, sh.ID(), e.Task, len(e.Runs)))
		}
		if err := sh.checkEntry(rt, e); err != nil {
			return shuffle.Refuse(wire.RefuseBadRequest, err)
		}
	}
	return nil
}

// committedHere reports whether some attempt of task committed p here.
func (sh *Shuffle) committedHere(task uint64, p uint32) bool {
	sh.Lock()
	defer sh.Unlock()
	_, ok := sh.ledger.Committed(task, p)
	return ok
}

// adoptEntry stores e's rows as one piece (never accumulated: the store
// keeps a resent piece once, by key).
func (rc *Receiver) adoptEntry(sh *Shuffle, e *shard.Entry) error {
	rec, err := sh.Codec.Decode(e.Data)
	if err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: %w", sh.ID(), e.Task, err))
	}
	if err := checkRuns(sh, e, rec); err != nil {
		rec.Release()
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	v := &piece{rec: rec, cols: table.ViewOf(rec), rows: rec.NumRows(), codec: sh.Codec, size: pieceOverhead + int64(len(e.Data))}
	k := spill.Key{Partition: e.Runs[0].Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}
	return rc.putPieces(sh, e, []spill.Item{{Key: k, Value: v}})
}

// commitAdopted commits each (task, attempt, partition) of keys for its
// attempt, keeping its row sum; one another attempt committed meanwhile
// keeps the partition.
func (sh *Shuffle) commitAdopted(keys map[adoptKey]bool, sums map[adoptKey]shard.PartSum) {
	sh.Lock()
	defer sh.Unlock()
	for k := range keys {
		one := dedup.NewBitset(sh.Spec.Partitions)
		one.Set(int(k.p))
		owned, err := sh.ledger.Commit(k.task, k.attempt, one)
		if err != nil || !owned.Has(int(k.p)) {
			continue // task and partition were checked; another attempt keeps p
		}
		if sh.adopted == nil {
			sh.adopted = map[adoptKey]shard.PartSum{}
		}
		sh.adopted[k] = sums[k]
	}
}
