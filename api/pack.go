package api

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
)

// A packed multi-partition DoGet (flightproto.Ticket.Pack) shares batches
// among consecutive small partitions: a read of 100,000 partitions of 26
// rows each was 200,000 messages, each encoded, sent, received and
// decoded, for 2.6 M rows that fit 40 batches. The rows of the partitions
// are streamed in ticket order; a batch's app metadata lists the
// partitions that end in it and the row where each ends
// (flightproto.AppendEnds), so a partition's rows are those since the
// previous end. A partition's own batch of a sixteenth of a packed batch or
// more is sent as it is.
const (
	// packRows and packBytes bound a packed batch: a quarter of a
	// partition's own batches (the nodes' default OutputBatchRows), since
	// the packs of every DoGet in flight are held at once on both ends
	// (at 65,536 rows, the demo's 1,000 x 1,000 read held 50 MB more).
	packRows  = 1 << 14
	packBytes = 2 << 20
	// packEnds bounds the ends of one batch, and so its metadata.
	packEnds = 8192
)

// packer gathers the batches of a packed multi-partition DoGet.
type packer struct {
	w      *flightproto.Writer
	schema *arrow.Schema
	mem    memory.Allocator // of the packed batches: a pool their buffers go back to once gRPC has written them
	recs   []arrow.Record   // held back, owned
	ranges []table.RowRange
	rows   int64 // of recs
	bytes  int64
	ends   []flightproto.End // in the batch being packed
	md     []byte
}

// batch takes rec over: it joins the packed batch, or, as large as a
// batch, goes as it is after what is held back.
func (k *packer) batch(rec arrow.Record) error {
	n, b := rec.NumRows(), table.RecordBytes(rec)
	if n == 0 {
		rec.Release()
		return nil
	}
	if 16*n >= packRows || 16*b >= packBytes {
		return k.alone(rec)
	}
	k.recs = append(k.recs, rec)
	if k.rows, k.bytes = k.rows+n, k.bytes+b; k.rows >= packRows || k.bytes >= packBytes {
		return k.flush()
	}
	return nil
}

// alone sends rec, a batch's worth of rows, as it is, with the ends held
// back (at its row 0) if no rows are.
func (k *packer) alone(rec arrow.Record) error {
	if len(k.recs) > 0 {
		if err := k.flush(); err != nil {
			rec.Release()
			return err
		}
	}
	return k.w.WriteReleasedWithAppMetadata(rec, k.takeEnds())
}

// takeEnds returns the metadata of the ends held back (nil if none) and
// forgets them; it is valid until the next call.
func (k *packer) takeEnds() []byte {
	if len(k.ends) == 0 {
		return nil
	}
	k.md = flightproto.AppendEnds(k.md[:0], k.ends)
	k.ends = k.ends[:0]
	return k.md
}

// end ends partition p at the rows held back.
func (k *packer) end(p int) error {
	k.ends = append(k.ends, flightproto.End{Partition: p, Row: k.rows})
	if len(k.ends) >= packEnds {
		return k.flush()
	}
	return nil
}

// flush sends the rows and ends held back as one batch.
func (k *packer) flush() error {
	if len(k.recs) == 0 && len(k.ends) == 0 {
		return nil
	}
	rec, err := k.gather()
	if err != nil {
		return err
	}
	return k.w.WriteReleasedWithAppMetadata(rec, k.takeEnds())
}

// gather returns the rows held back as one record, releasing theirs.
func (k *packer) gather() (arrow.Record, error) {
	defer k.releaseHeld()
	if len(k.recs) == 0 {
		return emptyRecord(memory.DefaultAllocator, k.schema), nil
	}
	for _, r := range k.recs {
		k.ranges = append(k.ranges, table.RowRange{Rec: r, Rows: r.NumRows()})
	}
	return table.ConcatRanges(k.mem, k.schema, k.ranges)
}

// releaseHeld releases the records held back.
func (k *packer) releaseHeld() {
	releaseRecords(k.recs)
	clear(k.recs)
	clear(k.ranges)
	k.recs, k.ranges, k.rows, k.bytes = k.recs[:0], k.ranges[:0], 0, 0
}

// release drops what is held back, unsent.
func (k *packer) release() { k.releaseHeld() }
