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
	var rows, n int64
	nf := schema.NumFields()
	for _, r := range ranges {
		rows += r.Rows
	}
	for c, f := range schema.Fields() {
		ct, ok := typeOf(f.Type)
		if !ok {
			continue
		}
		if rangesHaveNulls(c, nf, ranges) {
			n += bitutil.BytesForBits(rows)
		}
		n += valueBytes(ct, c, nf, ranges, rows)
	}
	return n
}

// valueBytes is the size of the value buffers gatherColumn makes of
// column c (of type ct, of nf) of rows rows.
func valueBytes(ct colType, c, nf int, ranges []RowRange, rows int64) int64 {
	switch ct.class {
	case classBool:
		return bitutil.BytesForBits(rows)
	case classVar32:
		return 4*(rows+1) + varBytes(c, nf, ranges, offs32)
	case classVar64:
		return 8*(rows+1) + varBytes(c, nf, ranges, offs64)
	default:
		return rows * int64(ct.width)
	}
}

// rangesHaveNulls reports whether gatherValidity makes a bitmap of column
// c: some range of rows has a validity bitmap.
func rangesHaveNulls(c, nf int, ranges []RowRange) bool {
	for _, r := range ranges {
		if r.Rows > 0 && colView(r, c, nf).Valid != nil {
			return true
		}
	}
	return false
}

// varBytes is the bytes of values of the ranges' column c.
func varBytes[O int32 | int64](c, nf int, ranges []RowRange, offsOf func(*ColumnView) []O) int64 {
	var n int64
	for _, r := range ranges {
		if r.Rows > 0 {
			v := colView(r, c, nf)
			offs := offsOf(&v)
			n += int64(offs[r.Off+r.Rows] - offs[r.Off])
		}
	}
	return n
}

// colView is the view of column c of r's rows (of nf columns).
func colView(r RowRange, c, nf int) ColumnView {
	if len(r.Cols) == nf { // as ConcatRanges takes them
		return r.Cols[c]
	}
	return viewColumn(r.Rec.Column(c))
}
