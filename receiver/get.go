package receiver

import (
	"context"
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// Get reads output partition p of sh from this node, which must own
// it, after the barrier. emit receives record batches of about
// OutputBatchRows rows, in (task, attempt, seq) order, and must Release
// them; an error from emit stops the read.
func (rc *Receiver) Get(ctx context.Context, sh *Shuffle, p int, emit func(arrow.Record) error) error {
	return rc.get(ctx, sh, p, rc.cfg.Allocator, emit)
}

// GetPooled is Get with batches whose buffers come from the receiver's
// pool and go back to it when a batch is released: emit must release each
// batch only once nothing reads its buffers any more (a Flight writer that
// shares them with gRPC: flightproto.Writer.WriteReleased), and must not
// keep any of its arrays past that.
func (rc *Receiver) GetPooled(ctx context.Context, sh *Shuffle, p int, emit func(arrow.Record) error) error {
	return rc.get(ctx, sh, p, &rc.out, emit)
}

// get is Get with the output batches' allocator.
func (rc *Receiver) get(ctx context.Context, sh *Shuffle, p int, alloc memory.Allocator, emit func(arrow.Record) error) error {
	if err := rc.readableFrame(sh, p); err != nil {
		return err
	}
	b := rc.newBatch(sh, alloc, emit)
	defer rc.putBatch(b)
	defer runtime.KeepAlive(sh) // the accumulated rows b's ranges read live as long as sh (offheap)
	err := rc.merge(ctx, sh, uint32(p), &b.scratch, b)
	if err == nil {
		err = b.flush()
	}
	if err == nil {
		sh.out.reads.Add(1)
	}
	return err
}

// readableFrame checks that partition p of sh, a dataframe shuffle, can be
// read here.
func (rc *Receiver) readableFrame(sh *Shuffle, p int) error {
	if err := rc.readable(sh, p); err != nil {
		return err
	}
	if sh.Array != nil {
		return fmt.Errorf("%w: shuffle %s is an array rechunk: read chunks", shuffle.ErrBadInput, sh.ID())
	}
	return nil
}

// rangeSink takes the rows of a partition read, in order (outBatch,
// Gather's partSink).
type rangeSink interface {
	// addRange takes rows whose record (or views' memory) the caller keeps
	// alive.
	addRange(r table.RowRange) error
	// add takes a stored piece, in memory or spilled, lent for the call.
	add(mem spill.Value, disk []byte) error
}

// merge hands the visible rows of partition p of sh to s in key order:
// the accumulated segments merged with the store's pieces as its Scan
// yields them, each only if the dedup ledger counts its attempt. sc is the
// merge's scratch; the caller keeps sh alive until s is done with the
// ranges of accumulated rows.
func (rc *Receiver) merge(ctx context.Context, sh *Shuffle, p uint32, sc *mergeScratch, s rangeSink) error {
	id := sh.ID()
	var m accMerge
	m.init(sh, p, sc, s)
	err := rc.cfg.Store.Scan(id, p, func(k spill.Key, mem spill.Value, disk []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.emitBefore(&k); err != nil {
			return err
		}
		if !sh.ledger.Visible(k.Task, k.Attempt, k.Partition) {
			return nil
		}
		if err := s.add(mem, disk); err != nil {
			return fmt.Errorf("shuffle %s partition %d task %d on node %s: %w", id, p, k.Task, sh.Self, err)
		}
		return nil
	})
	if err == nil {
		err = m.emitBefore(nil)
	}
	return err
}

// accMerge merges a partition's accumulated segments, sorted by key, into
// the store's pieces as the store's Scan yields them in key order.
type accMerge struct {
	sh   *Shuffle
	p    uint32
	s    rangeSink
	cols [][]table.ColumnView // the accumulator's rows, per chunk
	rows []int64              // and their counts
	segs []accSeg
	next int
	// lastTask and lastAttempt are the last attempt whose visibility was
	// looked up (if looked), visible the ledger's answer: a task's segments
	// of one attempt are adjacent.
	lastTask        uint64
	lastAttempt     uint32
	looked, visible bool
}

// mergeScratch is the memory of an accMerge's views and sorted segments,
// kept from one partition's read to the next (a fresh set per partition
// was most of the merge's setup of a read of many small partitions).
type mergeScratch struct {
	cols  [][]table.ColumnView
	rows  []int64
	segs  []accSeg
	at    []int32  // sortSegsInto's buckets
	local []accSeg // localSegs' copy
}

// reset drops the scratch's views (they alias a shuffle's memory).
func (sc *mergeScratch) reset() {
	clear(sc.cols[:cap(sc.cols)])
	sc.cols = sc.cols[:0]
}

// init starts m on partition p of sh, with sc's memory, sending to s.
func (m *accMerge) init(sh *Shuffle, p uint32, sc *mergeScratch, s rangeSink) {
	*m = accMerge{sh: sh, p: p, s: s}
	m.cols, m.rows, m.segs = sh.views(p, sc)
}

// emitBefore adds the committed segments whose keys are below k (all that
// are left when k is nil) to the sink.
func (m *accMerge) emitBefore(k *spill.Key) error {
	for ; m.next < len(m.segs); m.next++ {
		s := m.segs[m.next]
		if k != nil && s.key(m.p).Compare(*k) >= 0 {
			return nil
		}
		if !m.isVisible(s) {
			continue
		}
		if err := m.s.addRange(table.RowRange{Off: s.off, Rows: int64(s.rows), Cols: m.cols[s.chunk], Len: m.rows[s.chunk]}); err != nil {
			return err
		}
	}
	return nil
}

// isVisible reports whether the dedup ledger counts segment s (looked up
// once per run of segments of one attempt).
func (m *accMerge) isVisible(s accSeg) bool {
	if !m.looked || m.lastTask != s.task || m.lastAttempt != s.attempt {
		m.lastTask, m.lastAttempt, m.looked = s.task, s.attempt, true
		m.visible = m.sh.ledger.Visible(s.task, s.attempt, m.p)
	}
	return m.visible
}

// outBatch gathers the pieces of one output batch.
type outBatch struct {
	rc     *Receiver
	sh     *Shuffle
	alloc  memory.Allocator // of the batches' buffers
	emit   func(arrow.Record) error
	ranges []table.RowRange
	owned  []arrow.Record // references held until the flush
	rows   int64
	// scratch is the merge's, kept with the batch in the receiver's pool.
	scratch mergeScratch
}

// add appends one piece (in memory or spilled) and flushes a full batch.
func (b *outBatch) add(mem spill.Value, disk []byte) error {
	r, err := b.rangeOf(mem, disk)
	if err != nil {
		return err
	}
	return b.addRange(r)
}

// newBatch returns an empty batch of a read of sh, from the receiver's
// pool of them.
func (rc *Receiver) newBatch(sh *Shuffle, alloc memory.Allocator, emit func(arrow.Record) error) *outBatch {
	b, _ := rc.batches.Get().(*outBatch)
	if b == nil {
		b = &outBatch{}
	}
	b.rc, b.sh, b.alloc, b.emit = rc, sh, alloc, emit
	return b
}

// putBatch releases what b holds and gives it back to the pool.
func (rc *Receiver) putBatch(b *outBatch) {
	b.release()
	b.scratch.reset()
	b.sh, b.alloc, b.emit = nil, nil, nil
	rc.batches.Put(b)
}

// addRange appends rows whose record the caller keeps alive until the
// batch is flushed, and flushes a full batch. Rows that continue the last
// range's rows in the same record (segments appended one after another)
// extend that range.
func (b *outBatch) addRange(r table.RowRange) error {
	if n := len(b.ranges); n > 0 && sameRows(b.ranges[n-1], r) && b.ranges[n-1].Off+b.ranges[n-1].Rows == r.Off {
		b.ranges[n-1].Rows += r.Rows
	} else {
		b.ranges = append(b.ranges, r)
	}
	if b.rows += r.Rows; b.rows >= b.rc.cfg.OutputBatchRows {
		return b.flush()
	}
	return nil
}

// sameRows reports whether ranges x and y are of the same record (or, of
// accumulated rows, the same chunk's views).
func sameRows(x, y table.RowRange) bool {
	if x.Rec != nil || y.Rec != nil {
		return x.Rec == y.Rec
	}
	return len(x.Cols) > 0 && len(y.Cols) > 0 && &x.Cols[0] == &y.Cols[0]
}

// rangeOf returns a piece's rows, holding a reference to its record until
// the batch is flushed (a spill.Value is only lent for one callback).
func (b *outBatch) rangeOf(mem spill.Value, disk []byte) (table.RowRange, error) {
	r, err := pieceRange(b.sh, mem, disk)
	if err == nil {
		b.owned = append(b.owned, r.Rec)
	}
	return r, err
}

// pieceRange returns a stored piece's rows (in memory or spilled, of sh)
// and a reference to their record, which the caller releases.
func pieceRange(sh *Shuffle, mem spill.Value, disk []byte) (table.RowRange, error) {
	if mem != nil {
		p := mem.(*piece)
		p.rec.Retain()
		return table.RowRange{Rec: p.rec, Off: p.off, Rows: p.rows, Cols: p.cols}, nil
	}
	rec, err := sh.Codec.Decode(append([]byte(nil), disk...))
	if err != nil {
		return table.RowRange{}, err
	}
	return table.RowRange{Rec: rec, Rows: rec.NumRows()}, nil
}

// flush emits the gathered rows as one record.
func (b *outBatch) flush() error {
	if len(b.ranges) == 0 {
		return nil
	}
	rec, err := table.ConcatRanges(b.alloc, b.sh.Schema, b.ranges)
	b.release()
	if err != nil {
		return err
	}
	rows, bytes := rec.NumRows(), table.RecordBytes(rec) // emit takes rec over
	if err := b.emit(rec); err != nil {
		return err
	}
	b.sh.out.add(rows, bytes)
	return nil
}

// release drops the batch's ranges and decoded records.
func (b *outBatch) release() {
	releaseAll(b.owned)
	clear(b.ranges) // no reference to a record outlives the batch
	clear(b.owned)
	b.ranges, b.owned, b.rows = b.ranges[:0], b.owned[:0], 0
}

// readable checks that partition p of sh can be read here.
func (rc *Receiver) readable(sh *Shuffle, p int) error {
	id := sh.ID()
	if p < 0 || p >= sh.Spec.Partitions {
		return fmt.Errorf("%w: shuffle %s: partition %d out of range 0..%d", shuffle.ErrBadInput, id, p, sh.Spec.Partitions-1)
	}
	sh.Touch()
	if r := sh.Route(); !r.Owned.Has(p) {
		return fmt.Errorf("%w: shuffle %s partition %d is on node %s, not %s", shuffle.ErrNotOwner, id, p, sh.Members[r.GroupOf[p]], sh.Self)
	}
	switch ph, err := sh.Status(); ph {
	case shuffle.Open:
		return fmt.Errorf("%w: %s", shuffle.ErrNotSealed, id)
	case shuffle.Failed:
		return fmt.Errorf("%w: %s: %w", shuffle.ErrFailed, id, err)
	}
	return nil
}

// PartitionBytes estimates the memory a read of output partition p of sh
// hands out: the sizes of its stored pieces and the bytes of its
// accumulated rows, attempts that a read skips included; 0 when this node
// does not own p.
func (rc *Receiver) PartitionBytes(sh *Shuffle, p int) int64 {
	if p < 0 || p >= sh.Spec.Partitions || !sh.Route().Owned.Has(p) {
		return 0
	}
	n := rc.cfg.Store.PartitionBytes(sh.ID(), uint32(p))
	if a := sh.accumulated(uint32(p)); a != nil {
		a.mu.Lock()
		for _, c := range a.chunks {
			n += c.UsedBytes()
		}
		n += a.blockBytes
		a.mu.Unlock()
	}
	return n
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
