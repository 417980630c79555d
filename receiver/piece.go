package receiver

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/table"
)

// pieceOverhead is what a piece in memory costs beyond its share of the entry's bytes: this
// struct (48 bytes), the spill store's index entry (~90 bytes) and its key (16). It is
// charged against the budget so that many small pieces cannot take memory far past it.
const pieceOverhead = 160

// piece is one output partition's rows of one entry, held in memory: rows
// [off, off+rows) of the decoded entry, which every piece of the entry
// shares (one reference each). Reads gather pieces straight into output
// batches; only spilling cuts a piece out.
type piece struct {
	rec       arrow.Record
	cols      []table.ColumnView // rec's column views, shared by the entry's pieces
	off, rows int64
	size      int64
	codec     *table.Codec
}

// Size implements spill.Value.
func (p *piece) Size() int64 { return p.size }

// MarshalSpill implements spill.Value: the piece's rows as Arrow IPC.
func (p *piece) MarshalSpill() ([]byte, error) { return p.AppendSpill(nil) }

// AppendSpill implements spill.SpillAppender: it encodes the piece's rows
// straight into the spill store's group.
func (p *piece) AppendSpill(dst []byte) ([]byte, error) {
	s := table.Slice(p.rec, p.off, p.rows)
	defer s.Release()
	return p.codec.AppendRecord(dst, s)
}

// Release implements spill.Value.
func (p *piece) Release() { p.rec.Release() }
