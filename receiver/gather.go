package receiver

import (
	"context"
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// A packed read (many small partitions sharing batches) used to build a
// record of each partition's rows (Get) and then a batch of those records:
// two copies of every row, and a record per partition of ~30 rows. A
// Gather takes the partitions' row ranges instead, in the order Get would
// emit their rows, so that the caller copies them once, with one
// table.ConcatRanges per packed batch.

// Gather is a caller's list of row ranges, of the partitions given to
// Receiver.GatherPartition and the records given to AddRecord, in order.
// The ranges of accumulated rows alias their shuffle's memory: the Gather
// keeps the shuffles alive, and the records referenced, until Reset. The
// zero value is empty. Not safe for concurrent use.
type Gather struct {
	ranges []table.RowRange
	owned  []arrow.Record // referenced until Reset
	keep   []*Shuffle     // whose accumulated rows ranges alias
	rows   int64
	bytes  int64 // table.RecordBytes each partition's rows would have as a record, summed
	// scratch is the merge's, kept from one partition to the next.
	scratch mergeScratch
}

// Ranges returns the ranges gathered, valid until the next call to a
// method of g other than Rows and Bytes.
func (g *Gather) Ranges() []table.RowRange { return g.ranges }

// Rows returns the rows gathered.
func (g *Gather) Rows() int64 { return g.rows }

// Bytes returns the buffer bytes (table.RecordBytes) of the records that a
// read of each partition gathered, and each record added, would be: what
// the rows count in a packed batch's bounds and in the shuffle's ReadStats.
func (g *Gather) Bytes() int64 { return g.bytes }

// AddRecord appends all rows of rec, taking it over (it is released by
// Reset).
func (g *Gather) AddRecord(rec arrow.Record) {
	g.owned = append(g.owned, rec)
	g.ranges = append(g.ranges, table.RowRange{Rec: rec, Rows: rec.NumRows()})
	g.rows += rec.NumRows()
	g.bytes += table.RecordBytes(rec)
}

// Reset releases what g holds and empties it, keeping its memory.
func (g *Gather) Reset() {
	releaseAll(g.owned)
	clear(g.owned)
	clear(g.ranges)
	clear(g.keep)
	g.owned, g.ranges, g.keep, g.rows, g.bytes = g.owned[:0], g.ranges[:0], g.keep[:0], 0, 0
	g.scratch.reset()
}

// truncate drops what was appended after the first ranges and owned
// records.
func (g *Gather) truncate(ranges, owned int) {
	releaseAll(g.owned[owned:])
	clear(g.owned[owned:])
	clear(g.ranges[ranges:])
	g.owned, g.ranges = g.owned[:owned], g.ranges[:ranges]
}

// hold keeps sh alive with g.
func (g *Gather) hold(sh *Shuffle) {
	if n := len(g.keep); n == 0 || g.keep[n-1] != sh {
		g.keep = append(g.keep, sh)
	}
}

// errTooLarge stops the gather of a partition past its bound.
var errTooLarge = errors.New("receiver: partition larger than the gather's bound")

// GatherPartition appends the rows of output partition p of sh to g: the
// rows Get would emit, in the same order (the same merge of accumulated
// segments and stored pieces, the same dedup ledger), as ranges of the
// accumulated rows and of the pieces' records. A partition of more than
// maxRows rows (or of OutputBatchRows or more: Get would emit it in more
// than one batch), or whose rows as one record would be more than
// maxBytes bytes, is not gathered: g is left as it was and ok is false,
// and the caller reads it with Get. So is one with more than maxRows rows
// accumulated, of attempts the read skips included (a cheap look that
// spares the merge of a large partition). On an error g is left as it was. This
// node must own p, after the barrier (as for Get).
func (rc *Receiver) GatherPartition(ctx context.Context, sh *Shuffle, p int, g *Gather, maxRows, maxBytes int64) (ok bool, err error) {
	if err := rc.readableFrame(sh, p); err != nil {
		return false, err
	}
	maxRows = min(maxRows, rc.cfg.OutputBatchRows-1)
	if sh.accumulatedRows(uint32(p)) > maxRows {
		return false, nil // most likely too large: Get reads it (a read of it either way is right)
	}
	g.hold(sh)
	ps := partSink{g: g, sh: sh, from: len(g.ranges), owned: len(g.owned), maxRows: maxRows}
	err = rc.merge(ctx, sh, uint32(p), &g.scratch, &ps)
	if err == nil {
		ok = ps.fits(maxBytes)
	}
	if !ok {
		g.truncate(ps.from, ps.owned)
		if errors.Is(err, errTooLarge) {
			err = nil
		}
		return false, err
	}
	ps.count()
	return true, nil
}

// partSink appends one partition's rows to a Gather, as outBatch would
// gather them into one batch.
type partSink struct {
	g           *Gather
	sh          *Shuffle
	from, owned int // the Gather's ranges and owned records before the partition's
	rows        int64
	maxRows     int64
	bytes       int64 // of the partition's rows, once they fit
}

// addRange appends rows, extending the last range when they continue it
// in the same record or chunk (as outBatch.addRange).
func (s *partSink) addRange(r table.RowRange) error {
	g := s.g
	if n := len(g.ranges); n > s.from && sameRows(g.ranges[n-1], r) && g.ranges[n-1].Off+g.ranges[n-1].Rows == r.Off {
		g.ranges[n-1].Rows += r.Rows
	} else {
		g.ranges = append(g.ranges, r)
	}
	if s.rows += r.Rows; s.rows > s.maxRows {
		return errTooLarge
	}
	return nil
}

// add appends a stored piece, holding its record in the Gather.
func (s *partSink) add(mem spill.Value, disk []byte) error {
	r, err := pieceRange(s.sh, mem, disk)
	if err != nil {
		return err
	}
	s.g.owned = append(s.g.owned, r.Rec)
	return s.addRange(r)
}

// fits reports whether the partition's rows as one record are at most
// maxBytes bytes.
func (s *partSink) fits(maxBytes int64) bool {
	if len(s.g.ranges) > s.from {
		s.bytes = table.RangesBytes(s.sh.Schema, s.g.ranges[s.from:])
	}
	return s.bytes <= maxBytes
}

// count adds the partition to the Gather's totals and to the shuffle's
// read counters, as Get's batch of it would.
func (s *partSink) count() {
	s.g.rows += s.rows
	s.g.bytes += s.bytes
	if len(s.g.ranges) > s.from {
		s.sh.out.add(s.rows, s.bytes)
	}
	s.sh.out.reads.Add(1)
}

// accumulatedRows is the rows accumulated for partition p, those of
// attempts a read skips included.
func (sh *Shuffle) accumulatedRows(p uint32) int64 {
	a := sh.accumulated(p)
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.held() + a.blockRows
}
