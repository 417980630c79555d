package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/service"
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

// The bounds of a partition whose rows GatherPartition gathers into a
// packed batch: the largest that batch does not send alone.
const (
	packedRows  = (packRows - 1) / 16
	packedBytes = (packBytes - 1) / 16
)

// packer gathers the batches of a packed multi-partition DoGet. A small
// partition this node owns joins the packed batch as ranges of its rows
// (receiver.Gather): they are copied once, into the packed batch, with no
// record of the partition's own. Other partitions are read as a DoGet of
// one would read them, and their batches taken over (batch).
type packer struct {
	s      *Server
	w      *flightproto.Writer
	schema *arrow.Schema
	mem    memory.Allocator  // of the packed batches: a pool their buffers go back to once gRPC has written them
	g      receiver.Gather   // the rows held back
	ends   []flightproto.End // in the batch being packed
	md     []byte
}

// part packs partition p of shuffle id: its rows gathered when it is
// small and on this node, else its batches as a read of it emits them.
func (k *packer) part(ctx context.Context, id string, p int) error {
	ok, err := k.s.svc.GatherPartition(ctx, id, p, &k.g, packedRows, packedBytes)
	switch {
	case err == nil && ok:
		return k.flushFull()
	case err == nil || errors.Is(err, service.ErrNotOwner):
		return k.s.getOne(ctx, id, p, k.batch)
	default:
		return fmt.Errorf("partition %d: %w", p, err)
	}
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
	k.g.AddRecord(rec)
	return k.flushFull()
}

// flushFull sends the packed batch once it is full.
func (k *packer) flushFull() error {
	if k.g.Rows() >= packRows || k.g.Bytes() >= packBytes {
		return k.flush()
	}
	return nil
}

// alone sends rec, a batch's worth of rows, as it is, with the ends held
// back (at its row 0) if no rows are.
func (k *packer) alone(rec arrow.Record) error {
	if k.g.Rows() > 0 {
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
	k.ends = append(k.ends, flightproto.End{Partition: p, Row: k.g.Rows()})
	if len(k.ends) >= packEnds {
		return k.flush()
	}
	return nil
}

// flush sends the rows and ends held back as one batch.
func (k *packer) flush() error {
	if k.g.Rows() == 0 && len(k.ends) == 0 {
		return nil
	}
	rec, err := k.gather()
	if err != nil {
		return err
	}
	return k.w.WriteReleasedWithAppMetadata(rec, k.takeEnds())
}

// gather returns the rows held back as one record, and lets go of them.
func (k *packer) gather() (arrow.Record, error) {
	defer k.g.Reset()
	if k.g.Rows() == 0 {
		return emptyRecord(memory.DefaultAllocator, k.schema), nil
	}
	return table.ConcatRanges(k.mem, k.schema, k.g.Ranges())
}

// release drops what is held back, unsent.
func (k *packer) release() { k.g.Reset() }
