package table

import (
	"fmt"
	"math"
	"unsafe"

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

// Source is one record's column views and row count, which the runs of
// GatherRuns take rows from. The caller vouches that the views have the
// gather's schema's types (ViewOf of a record of the schema, or an
// Appender's views); only their count and the runs' bounds are checked.
type Source struct {
	Cols []ColumnView
	Rows int64
}

// SourceRun names rows [Off, Off+Rows) of source Src.
type SourceRun struct {
	Src       int32
	Off, Rows int64
}

// ConcatRanges builds one record of schema holding the given row ranges, in
// order. It copies each column's buffers once, straight into the output
// (no slice per range, no intermediate arrays): the receiver's way of
// turning many small pieces of one output partition into one batch. Every
// range's record must have schema's column types (checked); the records are
// not retained. The caller releases the result.
func ConcatRanges(mem memory.Allocator, schema *arrow.Schema, ranges []RowRange) (arrow.Record, error) {
	var seen sourceCache
	srcs := make([]Source, 0, 8)
	runs := make([]SourceRun, len(ranges))
	for i, r := range ranges {
		if err := checkRowRange(schema, r); err != nil {
			return nil, fmt.Errorf("table: range %d: %w", i, err)
		}
		src, ok := seen.find(r)
		if !ok && i > 0 && sameRange(ranges[i-1], r) {
			src, ok = runs[i-1].Src, true
		}
		if !ok {
			src = int32(len(srcs))
			srcs = append(srcs, sourceOf(r, schema))
			seen.add(r, src)
		}
		runs[i] = SourceRun{Src: src, Off: r.Off, Rows: r.Rows}
	}
	return gather(mem, schema, gatherIn{srcs, runs})
}

// sourceCache remembers the sources of ranges with views, by the views'
// address, in a small open-addressed table: ranges of up to several
// hundred records visited in any order share a source each, and a range
// that finds no free slot only costs a duplicate source.
type sourceCache struct {
	keys [1024]*ColumnView
	srcs [1024]int32
}

// cacheProbes is how many slots a lookup tries.
const cacheProbes = 8

// home is the first slot of k (Fibonacci hashing of its address).
func (c *sourceCache) home(k *ColumnView) int {
	return int((uint64(uintptr(unsafe.Pointer(k))) * 0x9E3779B97F4A7C15) >> 54)
}

// find returns the source of r's views, if remembered.
func (c *sourceCache) find(r RowRange) (int32, bool) {
	if len(r.Cols) == 0 {
		return 0, false
	}
	k := &r.Cols[0]
	for i, p := c.home(k), 0; p < cacheProbes; i, p = (i+1)&(len(c.keys)-1), p+1 {
		switch c.keys[i] {
		case k:
			return c.srcs[i], true
		case nil:
			return 0, false
		}
	}
	return 0, false
}

// add remembers src as the source of r's views, where a slot is free.
func (c *sourceCache) add(r RowRange, src int32) {
	if len(r.Cols) == 0 {
		return
	}
	k := &r.Cols[0]
	for i, p := c.home(k), 0; p < cacheProbes; i, p = (i+1)&(len(c.keys)-1), p+1 {
		if c.keys[i] == nil {
			c.keys[i], c.srcs[i] = k, src
			return
		}
	}
}

// sameRange says whether ranges a and b are of one record (and views).
func sameRange(a, b RowRange) bool {
	if len(a.Cols) != len(b.Cols) || a.Rec != b.Rec {
		return false
	}
	return len(a.Cols) == 0 || &a.Cols[0] == &b.Cols[0]
}

// sourceOf is r's record as a source.
func sourceOf(r RowRange, schema *arrow.Schema) Source {
	if len(r.Cols) == schema.NumFields() {
		n := r.Len
		if r.Rec != nil {
			n = r.Rec.NumRows()
		}
		return Source{Cols: r.Cols, Rows: n}
	}
	return Source{Cols: ViewOf(r.Rec), Rows: r.Rec.NumRows()}
}

// GatherRuns builds one record of schema holding the given runs of srcs, in
// order, as ConcatRanges does for ranges: the compact form for a gather of
// many tiny runs out of few sources (a run is 24 bytes, a RowRange 64 and
// its views). The sources are not retained. The caller releases the result.
func GatherRuns(mem memory.Allocator, schema *arrow.Schema, srcs []Source, runs []SourceRun) (arrow.Record, error) {
	for i, s := range srcs {
		if len(s.Cols) != schema.NumFields() {
			return nil, fmt.Errorf("table: source %d: %w: views of %d columns, want %d", i, ErrSchemaMismatch, len(s.Cols), schema.NumFields())
		}
	}
	for i, r := range runs {
		if r.Src < 0 || int(r.Src) >= len(srcs) {
			return nil, fmt.Errorf("table: run %d: %w: source %d of %d", i, ErrBadInput, r.Src, len(srcs))
		}
		if n := srcs[r.Src].Rows; r.Off < 0 || r.Rows < 0 || r.Off+r.Rows > n {
			return nil, fmt.Errorf("table: run %d: %w: rows [%d, %d) of a record of %d", i, ErrBadInput, r.Off, r.Off+r.Rows, n)
		}
	}
	return gather(mem, schema, gatherIn{srcs, runs})
}

// gather copies the checked runs of in into one record of schema.
func gather(mem memory.Allocator, schema *arrow.Schema, in gatherIn) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var rows int64
	for _, r := range in.runs {
		rows += r.Rows
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
		col, err := gatherColumn(mem, f.Type, c, in, int(rows))
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

// gatherIn are the runs of a gather and the sources they take rows from.
type gatherIn struct {
	srcs []Source
	runs []SourceRun
}

// views returns column c's view of every source.
func (in gatherIn) views(c int) []*ColumnView {
	out := make([]*ColumnView, len(in.srcs))
	for i := range in.srcs {
		out[i] = &in.srcs[i].Cols[c]
	}
	return out
}

// gatherColumn copies column c of every run into one array of n rows.
func gatherColumn(mem memory.Allocator, dt arrow.DataType, c int, in gatherIn, n int) (arrow.Array, error) {
	ct, ok := typeOf(dt)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, dt)
	}
	views := in.views(c)
	valid, nulls := gatherValidity(mem, views, in.runs, n)
	var values []*memory.Buffer
	var err error
	switch ct.class {
	case classBool:
		values = []*memory.Buffer{gatherBits(mem, views, in.runs, n)}
	case classVar32:
		values, err = gatherVar(mem, views, in.runs, n, 4, math.MaxInt32, offs32, asI32)
	case classVar64:
		values, err = gatherVar(mem, views, in.runs, n, 8, math.MaxInt64, offs64, asI64)
	default:
		values = []*memory.Buffer{gatherFixed(mem, views, in.runs, n, ct.width)}
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

// gatherValidity builds the output bitmap, or nil when no run has nulls.
func gatherValidity(mem memory.Allocator, views []*ColumnView, runs []SourceRun, n int) (*memory.Buffer, int) {
	any := false
	for _, v := range views {
		if v.Valid != nil {
			any = true
			break
		}
	}
	if any { // and one of them gives rows
		any = false
		for _, r := range runs {
			if r.Rows > 0 && views[r.Src].Valid != nil {
				any = true
				break
			}
		}
	}
	if !any {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	dst := buf.Bytes()
	var at int64
	for _, r := range runs {
		if v := views[r.Src]; v.Valid != nil {
			bitutil.CopyBitmap(v.Valid, v.ValidOff+int(r.Off), int(r.Rows), dst, int(at))
		} else {
			bitutil.SetBitsTo(dst, at, r.Rows, true)
		}
		at += r.Rows
	}
	return buf, n - bitutil.CountSetBits(dst, 0, n)
}

// gatherBits copies the value bits of a bool column.
func gatherBits(mem memory.Allocator, views []*ColumnView, runs []SourceRun, n int) *memory.Buffer {
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	dst := buf.Bytes()
	clear(dst)
	var at int
	for _, r := range runs {
		if r.Rows > 0 {
			v := views[r.Src]
			bitutil.CopyBitmap(v.Bits, v.BitOff+int(r.Off), int(r.Rows), dst, at)
		}
		at += int(r.Rows)
	}
	return buf
}

// gatherFixed copies the values of a fixed-width column. Runs of one row
// of 4 or 8 bytes (most of them in a gather of tiny runs) are copied as
// one word rather than by a call to copy.
func gatherFixed(mem memory.Allocator, views []*ColumnView, runs []SourceRun, n, width int) *memory.Buffer {
	buf := newBuffer(mem, n*width)
	dst := buf.Bytes()
	src := make([][]byte, len(views))
	for i, v := range views {
		src[i] = v.Fixed
	}
	switch width {
	case 4, 8:
		gatherWords(dst, src, runs, width)
	default:
		at := 0
		for _, r := range runs {
			at += copy(dst[at:], src[r.Src][int(r.Off)*width:int(r.Off+r.Rows)*width])
		}
	}
	return buf
}

// gatherWords is gatherFixed for values of 4 or 8 bytes: a one-row run is
// one load and store of a word (the width's branch is taken the same way
// for every run).
func gatherWords(dst []byte, src [][]byte, runs []SourceRun, width int) {
	at := 0
	for _, r := range runs {
		s, off := src[r.Src], int(r.Off)*width
		if r.Rows != 1 {
			at += copy(dst[at:], s[off:off+int(r.Rows)*width])
			continue
		}
		if width == 8 {
			*(*[8]byte)(dst[at : at+8]) = *(*[8]byte)(s[off : off+8])
		} else {
			*(*[4]byte)(dst[at : at+4]) = *(*[4]byte)(s[off : off+4])
		}
		at += width
	}
}

// copySmall copies src to dst and returns len(src), as copy does; tail is
// src with what follows it in its buffer. A value of up to 16 bytes with as
// much room on both sides is copied as one 16-byte word: the bytes past it
// land where the next values of a gather go, which overwrite them.
func copySmall(dst, src, tail []byte) int {
	if len(src) <= 16 && len(tail) >= 16 && len(dst) >= 16 {
		*(*[16]byte)(dst[:16]) = *(*[16]byte)(tail[:16])
		return len(src)
	}
	return copy(dst, src)
}

func offs32(v *ColumnView) []int32 { return v.Offs32 }
func offs64(v *ColumnView) []int64 { return v.Offs64 }

// gatherVar copies the offsets (rebased) and data of a variable-width
// column with offsets of width bytes; limit is the largest data size its
// offsets can address.
func gatherVar[O int32 | int64](mem memory.Allocator, views []*ColumnView, runs []SourceRun, n, width int, limit int64,
	offsOf func(*ColumnView) []O, cast func([]byte) []O) ([]*memory.Buffer, error) {
	offs := make([][]O, len(views))
	for i, v := range views {
		offs[i] = offsOf(v)
	}
	var size int64
	for _, r := range runs {
		if r.Rows > 0 {
			o := offs[r.Src]
			size += int64(o[r.Off+r.Rows] - o[r.Off])
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
	for _, r := range runs {
		if r.Rows == 1 {
			o, data := offs[r.Src], views[r.Src].Data
			a, b := o[r.Off], o[r.Off+1]
			at += O(copySmall(dst[at:], data[a:b], data[a:]))
			row++
			dstOffs[row] = at
			continue
		}
		if r.Rows == 0 {
			continue
		}
		src := offs[r.Src][r.Off : r.Off+r.Rows+1]
		base := at - src[0]
		for i := 1; i < len(src); i++ {
			dstOffs[row+i] = src[i] + base
		}
		at += O(copy(dst[at:], views[r.Src].Data[src[0]:src[len(src)-1]]))
		row += int(r.Rows)
	}
	return []*memory.Buffer{offBuf, dataBuf}, nil
}
