package table

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowRange names rows [Off, Off+Rows) of Rec. Cols, when set, are Rec's
// column views (ViewOf(Rec)), resolved once by the caller and shared among
// the ranges of one record; when nil, ConcatRanges resolves them. Rec may
// be nil when Cols are set: the range is then of Len rows of views alone
// (Appender.Views), whose columns the caller vouches have the schema's
// types; only their count and Len are checked.
type RowRange struct {
	Rec       arrow.Record
	Off, Rows int64
	Cols      []ColumnView
	Len       int64 // the rows of Cols when Rec is nil
}

// ConcatRanges builds one record of schema holding the given row ranges, in
// order. It copies each column's buffers once, straight into the output
// (no slice per range, no intermediate arrays): the receiver's way of
// turning many small pieces of one output partition into one batch. Every
// range's record must have schema's column types (checked); the records are
// not retained. The caller releases the result.
func ConcatRanges(mem memory.Allocator, schema *arrow.Schema, ranges []RowRange) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var rows int64
	views := make([][]ColumnView, len(ranges))
	for i, r := range ranges {
		if err := checkRowRange(schema, r); err != nil {
			return nil, fmt.Errorf("table: range %d: %w", i, err)
		}
		rows += r.Rows
		if views[i] = r.Cols; len(views[i]) != schema.NumFields() {
			views[i] = ViewOf(r.Rec)
		}
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c, f := range schema.Fields() {
		col, err := gatherColumn(mem, f.Type, c, gatherIn{ranges, views}, int(rows))
		if err != nil {
			return nil, fmt.Errorf("table: column %q: %w", f.Name, err)
		}
		cols[c] = col
	}
	return array.NewRecord(schema, cols, rows), nil
}

// checkRowRange refuses a range outside its record or of another layout.
func checkRowRange(schema *arrow.Schema, r RowRange) error {
	n := r.Len
	if r.Rec != nil {
		n = r.Rec.NumRows()
	}
	if r.Off < 0 || r.Rows < 0 || r.Off+r.Rows > n {
		return fmt.Errorf("%w: rows [%d, %d) of a record of %d", ErrBadInput, r.Off, r.Off+r.Rows, n)
	}
	if r.Rec == nil {
		if len(r.Cols) != schema.NumFields() {
			return fmt.Errorf("%w: views of %d columns, want %d", ErrSchemaMismatch, len(r.Cols), schema.NumFields())
		}
		return nil
	}
	if r.Rec.Schema() == schema {
		return nil // records from this shuffle's codec share its schema
	}
	if int(r.Rec.NumCols()) != schema.NumFields() {
		return fmt.Errorf("%w: %d columns, want %d", ErrSchemaMismatch, r.Rec.NumCols(), schema.NumFields())
	}
	for c, f := range schema.Fields() {
		if !arrow.TypeEqual(r.Rec.Column(c).DataType(), f.Type) {
			return fmt.Errorf("%w: column %q is %s, want %s", ErrSchemaMismatch, f.Name, r.Rec.Column(c).DataType(), f.Type)
		}
	}
	return nil
}

// gatherIn are the ranges of a gather and their column views.
type gatherIn struct {
	ranges []RowRange
	views  [][]ColumnView
}

// gatherColumn copies column c of every range into one array of n rows.
func gatherColumn(mem memory.Allocator, dt arrow.DataType, c int, ranges gatherIn, n int) (arrow.Array, error) {
	ct, ok := typeOf(dt)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
	}
	valid, nulls := gatherValidity(mem, c, ranges, n)
	var values []*memory.Buffer
	var err error
	switch ct.class {
	case classBool:
		values = []*memory.Buffer{gatherBits(mem, c, ranges, n)}
	case classVar32:
		values, err = gatherVar(mem, c, ranges, n, 4, math.MaxInt32, offs32, asI32)
	case classVar64:
		values, err = gatherVar(mem, c, ranges, n, 8, math.MaxInt64, offs64, asI64)
	default:
		values = []*memory.Buffer{gatherFixed(mem, c, ranges, n, ct.width)}
	}
	if err != nil {
		if valid != nil {
			valid.Release()
		}
		return nil, err
	}
	bufs := append([]*memory.Buffer{valid}, values...)
	data := array.NewData(dt, n, bufs, nil, nulls, 0)
	defer data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(data), nil
}

// gatherValidity builds the output bitmap, or nil when no range has nulls.
func gatherValidity(mem memory.Allocator, c int, in gatherIn, n int) (*memory.Buffer, int) {
	any := false
	for i, r := range in.ranges {
		if r.Rows > 0 && in.views[i][c].Valid != nil {
			any = true
			break
		}
	}
	if !any {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	dst := buf.Bytes()
	var at int64
	for i, r := range in.ranges {
		if v := &in.views[i][c]; v.Valid != nil {
			bitutil.CopyBitmap(v.Valid, v.ValidOff+int(r.Off), int(r.Rows), dst, int(at))
		} else {
			bitutil.SetBitsTo(dst, at, r.Rows, true)
		}
		at += r.Rows
	}
	return buf, n - bitutil.CountSetBits(dst, 0, n)
}

// gatherBits copies the value bits of a bool column.
func gatherBits(mem memory.Allocator, c int, in gatherIn, n int) *memory.Buffer {
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	dst := buf.Bytes()
	clear(dst)
	var at int
	for i, r := range in.ranges {
		if r.Rows > 0 {
			v := &in.views[i][c]
			bitutil.CopyBitmap(v.Bits, v.BitOff+int(r.Off), int(r.Rows), dst, at)
		}
		at += int(r.Rows)
	}
	return buf
}

// gatherFixed copies the values of a fixed-width column.
func gatherFixed(mem memory.Allocator, c int, in gatherIn, n, width int) *memory.Buffer {
	buf := newBuffer(mem, n*width)
	dst := buf.Bytes()
	at := 0
	for i, r := range in.ranges {
		if r.Rows == 0 {
			continue
		}
		src := in.views[i][c].Fixed
		at += copy(dst[at:], src[int(r.Off)*width:int(r.Off+r.Rows)*width])
	}
	return buf
}

func offs32(v *ColumnView) []int32 { return v.Offs32 }
func offs64(v *ColumnView) []int64 { return v.Offs64 }

// gatherVar copies the offsets (rebased) and data of a variable-width
// column with offsets of width bytes; limit is the largest data size its
// offsets can address.
func gatherVar[O int32 | int64](mem memory.Allocator, c int, in gatherIn, n, width int, limit int64,
	offsOf func(*ColumnView) []O, cast func([]byte) []O) ([]*memory.Buffer, error) {
	var size int64
	for i, r := range in.ranges {
		if r.Rows > 0 {
			offs := offsOf(&in.views[i][c])
			size += int64(offs[r.Off+r.Rows] - offs[r.Off])
		}
	}
	if size > limit {
		return nil, fmt.Errorf("%w: %d bytes of values do not fit the column's offsets", ErrBadInput, size)
	}
	offBuf := newBuffer(mem, (n+1)*width)
	dataBuf := newBuffer(mem, int(size))
	dstOffs, dst := cast(offBuf.Bytes()), dataBuf.Bytes()
	row, at := 0, O(0)
	dstOffs[0] = 0
	for i, r := range in.ranges {
		if r.Rows == 0 {
			continue
		}
		v := &in.views[i][c]
		src := offsOf(v)[r.Off : r.Off+r.Rows+1]
		base := at - src[0]
		for i := 1; i < len(src); i++ {
			dstOffs[row+i] = src[i] + base
		}
		at += O(copy(dst[at:], v.Data[src[0]:src[len(src)-1]]))
		row += int(r.Rows)
	}
	return []*memory.Buffer{offBuf, dataBuf}, nil
}
