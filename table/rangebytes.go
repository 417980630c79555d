package table

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// RangesBytes is RecordBytes of ConcatRanges(mem, schema, ranges), worked
// out from the ranges without gathering them: a packed read decides from
// it whether a partition's rows share a batch with others' before it
// copies them. The ranges must be valid for schema (ConcatRanges checks
// them; RangesBytes does not). A column of a type ConcatRanges refuses
// counts nothing.
func RangesBytes(schema *arrow.Schema, ranges []RowRange) int64 {
	nf := schema.NumFields()
	var small [8]rangeCol
	cols := small[:0]
	if nf > len(small) {
		cols = make([]rangeCol, 0, nf)
	}
	for _, f := range schema.Fields() {
		ct, ok := typeOf(f.Type)
		cols = append(cols, rangeCol{ct: ct, ok: ok})
	}
	var rows int64
	for i := range ranges {
		r := &ranges[i]
		if r.Rows <= 0 {
			continue
		}
		rows += r.Rows
		views := r.Cols
		if len(views) != nf {
			views = ViewOf(r.Rec) // a stored piece's record: rare
		}
		for c := range cols {
			cols[c].add(&views[c], r.Off, r.Rows)
		}
	}
	var n int64
	for _, c := range cols {
		n += c.bytes(rows)
	}
	return n
}

// rangeCol is what RangesBytes adds up of one column: one pass over the
// ranges, each column's view read in place (a pass per column, with a
// copy of the view per range, was a third of a packed read's cost at
// 10,000 x 10,000).
type rangeCol struct {
	ct    colType
	ok    bool // a type ConcatRanges takes
	nulls bool
	vals  int64 // bytes of values of a string or binary column
}

// add counts rows [off, off+rows) of v.
func (c *rangeCol) add(v *ColumnView, off, rows int64) {
	if v.Valid != nil {
		c.nulls = true
	}
	switch c.ct.class {
	case classVar32:
		c.vals += int64(v.Offs32[off+rows] - v.Offs32[off])
	case classVar64:
		c.vals += v.Offs64[off+rows] - v.Offs64[off]
	}
}

// bytes is the size of the column's buffers for rows rows.
func (c *rangeCol) bytes(rows int64) int64 {
	if !c.ok {
		return 0
	}
	var n int64
	if c.nulls {
		n += bitutil.BytesForBits(rows)
	}
	switch c.ct.class {
	case classBool:
		return n + bitutil.BytesForBits(rows)
	case classVar32:
		return n + 4*(rows+1) + c.vals
	case classVar64:
		return n + 8*(rows+1) + c.vals
	default:
		return n + rows*int64(c.ct.width)
	}
}
