package parquetio

// This file decodes some flat columns itself (required or nullable) and
// leaves every other column to Arrow: a record is Arrow's batch of the
// other columns with as many rows of each of these added, or batches of
// its own when Arrow has no column left. Its columns, measured against
// arrow-go v18.8.0 (BenchmarkCodecs, 256K rows, read time Arrow's / this
// file's, several rounds back to back on a loaded 2-core machine;
// 2026-11-28, commit f3ddca4):
//   - strings and binaries, PLAIN (1.6-2.4), DELTA_LENGTH_BYTE_ARRAY
//     (2.4-4.3) or dictionary pages (2.4-3.2; nullable 2.0-2.3, one round
//     of three 0.8): Arrow builds them value by value through a
//     BinaryBuilder; here a page's values become offsets over its bytes;
//   - DELTA_BINARY_PACKED INT32 and INT64 (see decodeDeltaEnd): no faster
//     than v18's decoder (0.7-1.4), but v18's never releases its blocks'
//     buffers (its bit widths), so a caller's allocator would never get
//     them back (TestMixedReaderMatchesArrow checks all is given back).
// Plain and dictionary-encoded numbers are Arrow's: this file's decoders
// of them were no faster than v18's (0.6-1.8 either way) and went.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// errPage means a page of a column decoded here is malformed or not what
// the column's metadata said.
var errPage = errors.New("malformed page")

// colKind says how a column's pages are decoded here.
type colKind int

const (
	kindArrow      colKind = iota // by Arrow's reader
	kindDelta                     // DELTA_BINARY_PACKED INT32 or INT64
	kindPlainBytes                // PLAIN BYTE_ARRAY (or its dictionary), as string or binary
	kindDeltaBytes                // DELTA_LENGTH_BYTE_ARRAY, as string or binary
)

// byteArrays reports whether the column is a string or binary one.
func (k colKind) byteArrays() bool { return k == kindPlainBytes || k == kindDeltaBytes }

// delta reports whether the column is delta-encoded: its chunks have no
// dictionary (writers choose a delta encoding instead of one).
func (k colKind) delta() bool { return k == kindDelta || k == kindDeltaBytes }

// fastKinds maps a physical type and the Arrow type pqarrow reads it as to
// the kinds of its pages decoded here, by encoding. Other pairs (dates,
// timestamps, plain or dictionary numbers, unsigned and small integers,
// large strings...) are Arrow's.
var fastKinds = map[[2]int]map[parquet.Encoding]colKind{
	{int(parquet.Types.Int32), int(arrow.INT32)}:      {parquet.Encodings.DeltaBinaryPacked: kindDelta},
	{int(parquet.Types.Int64), int(arrow.INT64)}:      {parquet.Encodings.DeltaBinaryPacked: kindDelta},
	{int(parquet.Types.ByteArray), int(arrow.STRING)}: {parquet.Encodings.Plain: kindPlainBytes, parquet.Encodings.DeltaLengthByteArray: kindDeltaBytes},
	{int(parquet.Types.ByteArray), int(arrow.BINARY)}: {parquet.Encodings.Plain: kindPlainBytes, parquet.Encodings.DeltaLengthByteArray: kindDeltaBytes},
}

// fastColumns returns the kind of each column of rdr (read as schema):
// kindArrow for all unless every field of the file is a flat column; then,
// for each required column without a dictionary whose chunks use one value
// encoding of fastKinds in every row group, that encoding's kind.
func fastColumns(rdr *file.Reader, schema *arrow.Schema) []colKind {
	md := rdr.MetaData()
	kinds := make([]colKind, schema.NumFields())
	if md.Schema.NumColumns() != schema.NumFields() {
		return kinds
	}
	for c := range md.Schema.NumColumns() {
		col := md.Schema.Column(c)
		if !topLevel(col, schema.Field(c).Name) {
			return make([]colKind, schema.NumFields())
		}
		byEnc := fastKinds[[2]int{int(col.PhysicalType()), int(schema.Field(c).Type.ID())}]
		if col.MaxDefinitionLevel() <= 1 && byEnc != nil {
			kinds[c] = byEnc[onlyEncoding(rdr, c)]
		}
	}
	return kinds
}

// topLevel reports whether col is the leaf of a top-level field named
// name, not nested or repeated: what this package encodes and decodes.
func topLevel(col *schema.Column, name string) bool {
	return col.MaxRepetitionLevel() == 0 && len(col.ColumnPath()) == 1 && col.Name() == name
}

// onlyEncoding returns the one value encoding of column c's data pages in
// every row group (PLAIN for a chunk with a dictionary, see chunkEncoding),
// or -1 if there is none.
func onlyEncoding(rdr *file.Reader, c int) parquet.Encoding {
	only := parquet.Encoding(-1)
	for g := range rdr.NumRowGroups() {
		cc, err := rdr.MetaData().RowGroup(g).ColumnChunk(c)
		if err != nil {
			return -1
		}
		enc := chunkEncoding(cc)
		if enc == -1 || only != -1 && enc != only {
			return -1
		}
		only = enc
	}
	return only
}

// chunkEncoding returns the one value encoding that a column chunk lists,
// or -1. A chunk with a dictionary lists the dictionary page's encoding
// (PLAIN, or PLAIN_DICTIONARY in format 1.0), its indices' and, if its
// writer fell back from the dictionary, PLAIN for the pages after that:
// it is PLAIN, with indices into the dictionary allowed (see decode).
func chunkEncoding(cc *metadata.ColumnChunkMetaData) parquet.Encoding {
	only := parquet.Encoding(-1)
	dict := cc.HasDictionaryPage()
	for _, e := range cc.Encodings() {
		switch {
		case e == parquet.Encodings.RLE || e == parquet.Encodings.BitPacked:
			// levels' encodings, which writers list for a required column too
		case dict && (e == parquet.Encodings.Plain || e == parquet.Encodings.PlainDict || e == parquet.Encodings.RLEDict):
			only = parquet.Encodings.Plain
		case dict:
			return -1
		case only == -1:
			only = e
		case e != only:
			return -1
		}
	}
	return only
}

// mixedReader reads records whose simple columns (fastColumns) it decodes
// itself and whose other columns Arrow reads (others; nil when there are
// none).
type mixedReader struct {
	schema  *arrow.Schema
	mem     memory.Allocator
	others  pqarrow.RecordReader
	otherAt []int // the record position of each of others' fields
	fast    []*fastColumn
	left    int64 // rows not yet read
	batch   int64
	rec     arrow.Record
	err     error
}

// newMixedReader returns the reader of columns cols of fr (over rdr; nil:
// every column) with its simple columns decoded here, or nil when it has
// none.
func newMixedReader(ctx context.Context, rdr *file.Reader, fr *pqarrow.FileReader, mem memory.Allocator, batchRows int64, cols []int) (*mixedReader, error) {
	schema, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	kinds := fastColumns(rdr, schema)
	if cols == nil {
		cols = make([]int, schema.NumFields())
		for c := range cols {
			cols[c] = c
		}
	}
	if !slices.ContainsFunc(cols, func(c int) bool { return c < len(kinds) && kinds[c] != kindArrow }) {
		return nil, nil
	}
	fields := make([]arrow.Field, len(cols))
	m := &mixedReader{mem: mem, left: rdr.NumRows(), batch: batchRows}
	for i, c := range cols {
		fields[i] = schema.Field(c)
		if kinds[c] == kindArrow {
			m.otherAt = append(m.otherAt, i)
		} else {
			m.fast = append(m.fast, &fastColumn{rdr: rdr, col: c, pos: i, field: fields[i], kind: kinds[c],
				nullable: rdr.MetaData().Schema.Column(c).MaxDefinitionLevel() == 1})
		}
	}
	md := schema.Metadata()
	m.schema = arrow.NewSchema(fields, &md)
	if len(m.otherAt) > 0 {
		leaves := make([]int, len(m.otherAt))
		for i, at := range m.otherAt {
			leaves[i] = cols[at]
		}
		if m.others, err = fr.GetRecordReader(ctx, leaves, nil); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Schema is the file's Arrow schema.
func (m *mixedReader) Schema() *arrow.Schema { return m.schema }

// Record is the current record, valid until the next call of Next.
func (m *mixedReader) Record() arrow.Record { return m.rec }

// Err is the error that ended Next, if any.
func (m *mixedReader) Err() error { return m.err }

// Release releases the current record, the columns' last pages and
// Arrow's reader.
func (m *mixedReader) Release() {
	m.releaseRec()
	for _, f := range m.fast {
		if f.pages != nil && f.pages.Page() != nil {
			f.pages.Page().Release()
		}
		f.pages = nil
	}
	if m.others != nil {
		m.others.Release()
	}
}

func (m *mixedReader) releaseRec() {
	if m.rec != nil {
		m.rec.Release()
		m.rec = nil
	}
}

// Next reads the next record: Arrow's next batch of the other columns
// (or batchRows rows when there are none) and as many rows of each column
// decoded here.
func (m *mixedReader) Next() bool {
	m.releaseRec()
	if m.err != nil || m.left == 0 {
		return false
	}
	cols := make([]arrow.Array, m.schema.NumFields())
	defer releaseArrays(cols)
	rows := min(m.batch, m.left)
	if m.others != nil {
		if !m.others.Next() {
			m.err = m.others.Err()
			if m.err == nil {
				m.err = fmt.Errorf("column %s ended with %d rows left", m.schema.Field(m.otherAt[0]).Name, m.left)
			}
			return false
		}
		other := m.others.Record()
		rows = other.NumRows()
		for i, c := range m.otherAt {
			cols[c] = other.Column(i)
			cols[c].Retain()
		}
	}
	for _, f := range m.fast {
		if cols[f.pos], m.err = f.read(m.mem, int(rows)); m.err != nil {
			m.err = fmt.Errorf("column %s: %w", f.field.Name, m.err)
			return false
		}
	}
	m.left -= rows
	m.rec = array.NewRecord(m.schema, cols, rows)
	return true
}

func releaseArrays(cols []arrow.Array) {
	for _, c := range cols {
		if c != nil {
			c.Release()
		}
	}
}

// fastColumn decodes one column here, page after page, row group after row
// group. A page's values are read from it until they are all read, then
// the next page replaces it (Arrow's page reader reuses its buffer).
type fastColumn struct {
	rdr   *file.Reader
	col   int // the leaf column
	pos   int // in the record
	field arrow.Field
	kind  colKind
	group int // the next row group to open
	pages file.PageReader
	// groupLeft is the rows of the open row group that no page has held
	// yet: a page may hold no more (its header could ask for any amount of
	// memory), and the group's pages must hold them all.
	groupLeft int64
	// The current page: n rows, of which at are read; its non-null values,
	// of which vat are read: vals (delta integers; a DELTA_LENGTH_BYTE_ARRAY
	// page's value lengths), or raw, starts and ends (strings and
	// binaries: value i is raw[starts[i]:ends[i]]). levels are the rows' definition levels (1 a
	// value, 0 a null) when the column is nullable and the page holds a
	// null, else nil.
	n, at, vat int
	levels     []int32
	nullable   bool
	vals       []uint64
	raw        []byte
	starts     []int32
	ends       []int32
	scratch    []byte
	// The open row group's dictionary (dictN < 0: none): dictN values,
	// PLAIN, copied from its page (Arrow's page reader reuses its buffer);
	// value k of a string or binary column is dict[dictStarts[k]:dictEnds[k]].
	dict                 []byte
	dictN                int
	dictStarts, dictEnds []int32
	idx                  []int32 // a page's dictionary indices
}

// width is the bytes of one value of a fixed-width column.
func (f *fastColumn) width() int {
	return f.field.Type.(arrow.FixedWidthDataType).BitWidth() / 8
}

// read returns the next n rows as an array of the column's type,
// allocated from mem.
func (f *fastColumn) read(mem memory.Allocator, n int) (arrow.Array, error) {
	v := newValidity(mem, f.nullable, n)
	if f.kind.byteArrays() {
		return f.readBytes(mem, n, v)
	}
	w := f.width()
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * w)
	out := buf.Bytes()
	for i := 0; i < n; {
		if f.at == f.n {
			if err := f.nextPage(); err != nil {
				buf.Release()
				v.release()
				return nil, err
			}
			continue
		}
		k := min(n-i, f.n-f.at)
		if len(f.levels) == 0 {
			f.copyValues(out[i*w:(i+k)*w], k)
			v.setValid(i, k)
		} else {
			levels := f.levels[f.at : f.at+k]
			for j := 0; j < k; {
				e := j + 1 // rows [j, e) have one level
				for e < k && levels[e] == levels[j] {
					e++
				}
				if levels[j] == 0 {
					clear(out[(i+j)*w : (i+e)*w])
					v.nulls += e - j
				} else {
					f.copyValues(out[(i+j)*w:(i+e)*w], e-j)
					v.setValid(i+j, e-j)
				}
				j = e
			}
		}
		i, f.at = i+k, f.at+k
	}
	return makeArray(f.field.Type, n, v, nil, buf), nil
}

// copyValues copies the page's next k values to dst.
func (f *fastColumn) copyValues(dst []byte, k int) {
	switch f.width() {
	case 8:
		copy(arrow.Uint64Traits.CastFromBytes(dst), f.vals[f.vat:f.vat+k])
	default:
		narrow(arrow.Uint32Traits.CastFromBytes(dst), f.vals[f.vat:f.vat+k])
	}
	f.vat += k
}

// readBytes returns the next n rows of a plain string or binary column.
func (f *fastColumn) readBytes(mem memory.Allocator, n int, v *validity) (arrow.Array, error) {
	offs := memory.NewResizableBuffer(mem)
	offs.Resize((n + 1) * 4)
	off := arrow.Int32Traits.CastFromBytes(offs.Bytes())
	data := memory.NewResizableBuffer(mem)
	fail := func(err error) (arrow.Array, error) {
		offs.Release()
		data.Release()
		v.release()
		return nil, err
	}
	var size int64
	for i := 0; i < n; {
		if f.at == f.n {
			if err := f.nextPage(); err != nil {
				return fail(err)
			}
			continue
		}
		k := min(n-i, f.n-f.at)
		vals := k // the values among the k rows
		if len(f.levels) > 0 {
			vals = 0
			for _, l := range f.levels[f.at : f.at+k] {
				vals += int(l)
			}
		}
		var bytes int64
		run := f.kind == kindDeltaBytes && vals == k // k values one after another
		if run {
			bytes = int64(f.ends[f.vat+k-1] - f.starts[f.vat])
		} else {
			for j := f.vat; j < f.vat+vals; j++ {
				bytes += int64(f.ends[j] - f.starts[j])
			}
		}
		if size+bytes > math.MaxInt32 {
			return fail(fmt.Errorf("%w: more than 2 GiB of values in %d rows", errPage, n))
		}
		data.Reserve(int(size + bytes))
		data.ResizeNoShrink(int(size + bytes))
		dst := data.Bytes()
		if run {
			i, size = f.copyRun(off[i:i+k], dst, size, v, i, k), size+bytes
			continue
		}
		for j := range k {
			off[i] = int32(size)
			i++
			if len(f.levels) > 0 && f.levels[f.at+j] == 0 {
				v.null()
				continue
			}
			v.setValid(i-1, 1)
			size += int64(copy(dst[size:], f.raw[f.starts[f.vat]:f.ends[f.vat]]))
			f.vat++
		}
		f.at += k
	}
	off[n] = int32(size)
	return makeArray(f.field.Type, n, v, offs, data), nil
}

// copyRun copies the next k values, which lie one after another in the
// page (DELTA_LENGTH_BYTE_ARRAY, no nulls among them), to dst at size in one
// copy, sets their offsets in off (rows i to i+k) and marks them valid; it
// returns the row after them.
func (f *fastColumn) copyRun(off []int32, dst []byte, size int64, v *validity, i, k int) int {
	base := f.starts[f.vat]
	for j, s := range f.starts[f.vat : f.vat+k] {
		off[j] = int32(size) + s - base
	}
	copy(dst[size:], f.raw[base:f.ends[f.vat+k-1]])
	v.setValid(i, k)
	f.vat, f.at = f.vat+k, f.at+k
	return i + k
}

// validity builds the validity bitmap of a nullable column's rows (nil:
// the column is required).
type validity struct {
	buf   *memory.Buffer
	nulls int
}

// newValidity returns the bitmap of n rows, all null until set, or nil if
// the column is not nullable.
func newValidity(mem memory.Allocator, nullable bool, n int) *validity {
	if !nullable {
		return nil
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(n))))
	clear(buf.Bytes())
	return &validity{buf: buf}
}

// setValid marks rows [i, i+k) valid.
func (v *validity) setValid(i, k int) {
	if v != nil {
		bitutil.SetBitsTo(v.buf.Bytes(), int64(i), int64(k), true)
	}
}

// null counts a null row.
func (v *validity) null() { v.nulls++ }

// release drops the bitmap.
func (v *validity) release() {
	if v != nil {
		v.buf.Release()
	}
}

// makeArray makes an array of typ from its buffers (values, or offsets
// and values; with v, the validity bitmap, dropped when no row is null),
// taking their references.
func makeArray(typ arrow.DataType, n int, v *validity, offs, vals *memory.Buffer) arrow.Array {
	var valid *memory.Buffer
	nulls := 0
	if v != nil && v.nulls > 0 {
		valid, nulls = v.buf, v.nulls
	} else {
		v.release()
	}
	bufs := []*memory.Buffer{valid, vals}
	if offs != nil {
		bufs = []*memory.Buffer{valid, offs, vals}
	}
	data := array.NewData(typ, n, bufs, nil, nulls, 0)
	defer data.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return array.MakeFromData(data)
}

// narrow stores the low 32 bits of each of src in dst.
func narrow(dst []uint32, src []uint64) {
	for i, v := range src {
		dst[i] = uint32(v)
	}
}

// nextPage reads the column's next data page.
func (f *fastColumn) nextPage() error {
	for f.pages == nil || !f.pages.Next() {
		if f.pages != nil {
			if err := f.pages.Err(); err != nil {
				return err
			}
			if f.groupLeft != 0 {
				return fmt.Errorf("%w: row group %d: %d rows in no page", errPage, f.group-1, f.groupLeft)
			}
		}
		if f.group == f.rdr.NumRowGroups() {
			return fmt.Errorf("%w: the column has fewer rows than the file", errPage)
		}
		pages, err := f.rdr.RowGroup(f.group).GetColumnPageReader(f.col)
		if err != nil {
			return err
		}
		f.pages, f.groupLeft, f.group, f.dictN = pages, f.rdr.RowGroup(f.group).NumRows(), f.group+1, -1
	}
	p := f.pages.Page()
	switch p := p.(type) {
	case *file.DictionaryPage:
		if err := f.takeDict(p); err != nil {
			return err
		}
		return f.nextPage()
	case *file.DataPageV1, *file.DataPageV2:
	default:
		return fmt.Errorf("%w: a %T where its data pages are", errPage, p)
	}
	dp := p.(file.DataPage)
	n := int64(dp.NumValues())
	if n > f.groupLeft {
		return fmt.Errorf("%w: a page of %d values in row group %d, which has %d rows left", errPage, n, f.group-1, f.groupLeft)
	}
	f.groupLeft -= n
	f.n, f.at, f.vat = 0, 0, 0
	values, nonNull, err := f.takeLevels(dp, int(n))
	if err != nil {
		return err
	}
	if err := f.decode(parquet.Encoding(dp.Encoding()), values, nonNull); err != nil {
		return err
	}
	f.n = int(n)
	return nil
}

// takeLevels takes the definition levels of a data page of n rows (a
// nullable column's; a required column has none) and returns the page's
// values and how many there are. f.levels is nil when every row has a
// value.
func (f *fastColumn) takeLevels(p file.DataPage, n int) (values []byte, nonNull int, err error) {
	data := p.Data()
	var levels []byte
	switch p := p.(type) {
	case *file.DataPageV1:
		if f.nullable {
			if len(data) < 4 || int(binary.LittleEndian.Uint32(data)) > len(data)-4 {
				return nil, 0, fmt.Errorf("%w: definition levels past the page", errPage)
			}
			size := int(binary.LittleEndian.Uint32(data))
			levels, data = data[4:4+size], data[4+size:]
		}
	case *file.DataPageV2:
		size := int(p.DefinitionLevelByteLen())
		switch {
		case p.RepetitionLevelByteLen() != 0 || !f.nullable && size != 0:
			return nil, 0, fmt.Errorf("%w: levels in a page of a required column", errPage)
		case size > len(data):
			return nil, 0, fmt.Errorf("%w: definition levels past the page", errPage)
		}
		levels, data = data[:size], data[size:]
	}
	f.levels = f.levels[:0]
	if !f.nullable {
		return data, n, nil
	}
	if f.levels, err = decodeHybrid(f.levels, levels, n, 1, 2); err != nil {
		return nil, 0, fmt.Errorf("definition levels: %w", err)
	}
	for _, l := range f.levels {
		nonNull += int(l)
	}
	if v2, ok := p.(*file.DataPageV2); ok && int(v2.NumNulls()) != n-nonNull {
		return nil, 0, fmt.Errorf("%w: %d nulls in a page whose header says %d", errPage, n-nonNull, v2.NumNulls())
	}
	if nonNull == n {
		f.levels = f.levels[:0]
	}
	return data, nonNull, nil
}

// decode takes the n values of a page's data, encoded as enc.
func (f *fastColumn) decode(enc parquet.Encoding, data []byte, n int) error {
	want := parquet.Encodings.Plain
	switch f.kind {
	case kindDelta:
		want = parquet.Encodings.DeltaBinaryPacked
	case kindDeltaBytes:
		want = parquet.Encodings.DeltaLengthByteArray
	}
	if enc == parquet.Encodings.RLEDict || enc == parquet.Encodings.PlainDict {
		return f.lookUp(data, n)
	}
	if enc != want {
		return fmt.Errorf("%w: a page encoded %s in a column of %s", errPage, enc, want)
	}
	var err error
	switch f.kind {
	case kindDelta:
		f.vals, _, err = decodeDeltaEnd(f.vals, data, n, &f.scratch)
	case kindPlainBytes:
		f.raw = data
		f.starts, f.ends, err = plainBytes(f.starts[:0], f.ends[:0], data, n)
	case kindDeltaBytes:
		err = f.deltaLengthBytes(data, n)
	}
	return err
}

// deltaLengthBytes takes the n values of a DELTA_LENGTH_BYTE_ARRAY page:
// their lengths (DELTA_BINARY_PACKED, 32-bit), then their bytes one after
// another, which become f.raw, with f.starts and f.ends where each value
// begins and ends in it.
func (f *fastColumn) deltaLengthBytes(data []byte, n int) error {
	if len(data) > math.MaxInt32 {
		return fmt.Errorf("%w: a page of %d bytes", errPage, len(data))
	}
	lens, end, err := decodeDeltaEnd(f.vals, data, n, &f.scratch)
	f.vals = lens
	if err != nil {
		return fmt.Errorf("value lengths: %w", err)
	}
	f.raw = data[end:]
	starts, ends := slices.Grow(f.starts[:0], n)[:n], slices.Grow(f.ends[:0], n)[:n]
	at := int64(0)
	for i, l := range lens {
		size := int64(int32(l))
		if size < 0 || size > int64(len(f.raw))-at {
			f.starts, f.ends = starts[:0], ends[:0]
			return fmt.Errorf("%w: value %d of %d: %d bytes past the page", errPage, i, n, size)
		}
		starts[i], at = int32(at), at+size
		ends[i] = int32(at)
	}
	f.starts, f.ends = starts, ends
	return nil
}

// plainBytes appends to starts and ends where each of the n PLAIN
// BYTE_ARRAY values of data begins and ends (after its 4-byte length).
func plainBytes(starts, ends []int32, data []byte, n int) ([]int32, []int32, error) {
	if len(data) > math.MaxInt32 {
		return starts, ends, fmt.Errorf("%w: a page of %d bytes", errPage, len(data))
	}
	at := 0
	for i := range n {
		if len(data)-at < 4 {
			return starts, ends, fmt.Errorf("%w: value %d of %d: no length", errPage, i, n)
		}
		size := int(binary.LittleEndian.Uint32(data[at:]))
		at += 4
		if size > len(data)-at {
			return starts, ends, fmt.Errorf("%w: value %d of %d: %d bytes past the page", errPage, i, n, size)
		}
		starts, ends = append(starts, int32(at)), append(ends, int32(at+size))
		at += size
	}
	return starts, ends, nil
}

// takeDict copies a row group's dictionary page, which must come before
// its data pages and be PLAIN.
func (f *fastColumn) takeDict(p *file.DictionaryPage) error {
	enc := parquet.Encoding(p.Encoding())
	switch {
	case f.kind.delta():
		return fmt.Errorf("%w: a dictionary in a delta-encoded column", errPage)
	case f.dictN >= 0 || f.groupLeft != f.rdr.RowGroup(f.group-1).NumRows():
		return fmt.Errorf("%w: a dictionary page after the first page of row group %d", errPage, f.group-1)
	case enc != parquet.Encodings.Plain && enc != parquet.Encodings.PlainDict:
		return fmt.Errorf("%w: a dictionary encoded %s", errPage, enc)
	case p.NumValues() < 0:
		return fmt.Errorf("%w: a dictionary of %d values", errPage, p.NumValues())
	}
	n := int(p.NumValues())
	f.dict = append(f.dict[:0], p.Data()...)
	var err error
	if f.dictStarts, f.dictEnds, err = plainBytes(f.dictStarts[:0], f.dictEnds[:0], f.dict, n); err != nil {
		return fmt.Errorf("dictionary: %w", err)
	}
	f.dictN = n
	return nil
}

// lookUp takes the n values of a page of dictionary indices (of a string
// or binary column: delta-encoded columns have no dictionary) as slices of
// the dictionary.
func (f *fastColumn) lookUp(data []byte, n int) error {
	if f.kind.delta() || f.dictN < 0 {
		return fmt.Errorf("%w: dictionary indices in a column without a dictionary", errPage)
	}
	var err error
	if f.idx, err = decodeIndices(f.idx[:0], data, n, f.dictN); err != nil {
		return err
	}
	f.raw = f.dict
	f.starts, f.ends = slices.Grow(f.starts[:0], n)[:n], slices.Grow(f.ends[:0], n)[:n]
	gather(f.starts, f.dictStarts, f.idx)
	gather(f.ends, f.dictEnds, f.idx)
	return nil
}

// gather sets dst[i] to dict[idx[i]].
func gather(dst, dict, idx []int32) {
	for i, k := range idx {
		dst[i] = dict[k]
	}
}

// decodeIndices appends the n dictionary indices of a page's data: a byte
// giving their bit width, then the RLE / bit-packed hybrid. Every index
// must be below size. A run may hold more values than the page has left
// (a last bit-packed group's padding); those are not read. A page of no
// values (all null) may leave out even the bit width, as Arrow's reader
// allows.
func decodeIndices(dst []int32, data []byte, n, size int) ([]int32, error) {
	if len(data) == 0 && n == 0 {
		return dst, nil
	}
	if len(data) == 0 {
		return dst, fmt.Errorf("%w: no bit width for dictionary indices", errPage)
	}
	return decodeHybrid(dst, data[1:], n, int(data[0]), size)
}

// decodeHybrid appends n values of width w, each below size, from their
// RLE / bit-packed hybrid in data (see decodeIndices).
func decodeHybrid(dst []int32, data []byte, n, w, size int) ([]int32, error) {
	if w > 32 {
		return dst, fmt.Errorf("%w: hybrid values of %d bits", errPage, w)
	}
	dst = slices.Grow(dst, n)
	for len(dst) < n {
		h, k := binary.Uvarint(data)
		if k <= 0 {
			return dst, fmt.Errorf("%w: %d of %d dictionary indices, then no run", errPage, len(dst), n)
		}
		data = data[k:]
		var err error
		if h&1 == 0 {
			dst, data, err = rleRun(dst, data, h>>1, w, n-len(dst))
		} else {
			dst, data, err = packedRun(dst, data, h>>1, w, n-len(dst))
		}
		if err != nil {
			return dst, err
		}
	}
	for _, k := range dst[len(dst)-n:] {
		if k < 0 || int(k) >= size {
			return dst, fmt.Errorf("%w: index %d into a dictionary of %d values", errPage, k, size)
		}
	}
	return dst, nil
}

// rleRun appends an RLE run of count copies of one value of width w (at
// most left of them) and returns the data after it.
func rleRun(dst []int32, data []byte, count uint64, w, left int) ([]int32, []byte, error) {
	vb := (w + 7) / 8
	if count == 0 || len(data) < vb {
		return dst, data, fmt.Errorf("%w: an RLE run of %d indices in %d bytes", errPage, count, len(data))
	}
	var v uint32
	for i := range vb {
		v |= uint32(data[i]) << (8 * i)
	}
	for range min(count, uint64(left)) {
		dst = append(dst, int32(v))
	}
	return dst, data[vb:], nil
}

// packedRun appends the values of a bit-packed run of groups groups of 8
// values of width w (at most left of them) and returns the data after it.
// The run's bytes past the values read may be missing, as at a page's end.
func packedRun(dst []int32, data []byte, groups uint64, w, left int) ([]int32, []byte, error) {
	if groups == 0 {
		return dst, data, fmt.Errorf("%w: a bit-packed run of no values", errPage)
	}
	take := int(min(groups, uint64(left+7)/8)) * 8
	take = min(take, left)
	need := (take*w + 7) / 8
	if len(data) < need {
		return dst, data, fmt.Errorf("%w: a bit-packed run of %d indices of %d bits in %d bytes", errPage, take, w, len(data))
	}
	mask := uint64(1)<<w - 1
	for i := range take {
		bit := i * w
		var word uint64
		if at := bit / 8; at+8 <= len(data) {
			word = binary.LittleEndian.Uint64(data[at:])
		} else {
			for j := at; j < len(data); j++ {
				word |= uint64(data[j]) << (8 * (j - at))
			}
		}
		dst = append(dst, int32(uint32(word>>(bit%8)&mask)))
	}
	if groups > uint64(len(data)) {
		return dst, nil, nil // the run's bytes reach the page's end
	}
	return dst, data[min(len(data), int(groups)*w):], nil
}
