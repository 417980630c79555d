package parquetio

// Arrow v15 decodes DELTA_BINARY_PACKED pages one value at a time through
// a generic bit reader, at about 35 ns an int64 on this project's machine:
// the delta-encoded key and id columns that Auto writes (and that other
// writers choose for sorted or small-range integers) cost a 16M-row
// set-index more CPU to read than every other column together. This file
// decodes such columns itself, about 20 times faster (decodeDelta), and
// leaves every other column to Arrow: a record is Arrow's batch of the other
// columns with as many rows of each delta column added.

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// deltaColumns returns the columns of rdr that this package decodes itself
// (in schema order): required, flat INT32 or INT64 columns read as Arrow
// int32 or int64 whose chunks are DELTA_BINARY_PACKED and nothing else, in
// every row group, in a file whose columns are all flat (a field a leaf).
func deltaColumns(rdr *file.Reader, schema *arrow.Schema) []int {
	md := rdr.MetaData()
	if md.Schema.NumColumns() != schema.NumFields() {
		return nil
	}
	var cols []int
	for c := range md.Schema.NumColumns() {
		col := md.Schema.Column(c)
		if col.MaxRepetitionLevel() != 0 || len(col.ColumnPath()) != 1 || col.Name() != schema.Field(c).Name {
			return nil
		}
		want := map[parquet.Type]arrow.Type{parquet.Types.Int32: arrow.INT32, parquet.Types.Int64: arrow.INT64}
		if t, ok := want[col.PhysicalType()]; ok && t == schema.Field(c).Type.ID() && col.MaxDefinitionLevel() == 0 && onlyDelta(rdr, c) {
			cols = append(cols, c)
		}
	}
	return cols
}

// onlyDelta reports whether column c's chunk in every row group lists
// DELTA_BINARY_PACKED as its only value encoding and has no dictionary.
func onlyDelta(rdr *file.Reader, c int) bool {
	for g := range rdr.NumRowGroups() {
		cc, err := rdr.MetaData().RowGroup(g).ColumnChunk(c)
		if err != nil || cc.HasDictionaryPage() {
			return false
		}
		for _, e := range cc.Encodings() {
			// RLE and BIT_PACKED are levels' encodings, which some writers list
			// for a required column too.
			if e != parquet.Encodings.DeltaBinaryPacked && e != parquet.Encodings.RLE && e != parquet.Encodings.BitPacked {
				return false
			}
		}
		if !slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
			return false
		}
	}
	return true
}

// mixedReader reads records whose delta columns (deltaColumns) it decodes
// itself and whose other columns Arrow reads (others; nil when there are
// none).
type mixedReader struct {
	path    string
	schema  *arrow.Schema
	mem     memory.Allocator
	others  pqarrow.RecordReader
	otherAt []int // the schema position of each of others' fields
	delta   []*deltaColumn
	left    int64 // rows not yet read
	batch   int64
	rec     arrow.Record
	err     error
}

// newMixedReader returns the reader of fr (of the file at path) with its
// columns delta decoded here, or nil when it has none.
func newMixedReader(ctx context.Context, path string, rdr *file.Reader, fr *pqarrow.FileReader, mem memory.Allocator, batchRows int64) (*mixedReader, error) {
	schema, err := fr.Schema()
	if err != nil {
		return nil, err
	}
	cols := deltaColumns(rdr, schema)
	if len(cols) == 0 {
		return nil, nil
	}
	m := &mixedReader{path: path, schema: schema, mem: mem, left: rdr.NumRows(), batch: batchRows}
	for c := range schema.NumFields() {
		if slices.Contains(cols, c) {
			m.delta = append(m.delta, &deltaColumn{rdr: rdr, col: c, field: schema.Field(c)})
		} else {
			m.otherAt = append(m.otherAt, c)
		}
	}
	if len(m.otherAt) > 0 {
		if m.others, err = fr.GetRecordReader(ctx, m.otherAt, nil); err != nil {
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

// Release releases the current record and Arrow's reader.
func (m *mixedReader) Release() {
	m.releaseRec()
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
// (or batchRows rows when there are none) and as many rows of each delta
// column.
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
	for _, d := range m.delta {
		if cols[d.col], m.err = d.read(m.mem, int(rows)); m.err != nil {
			m.err = fmt.Errorf("column %s: %w", d.field.Name, m.err)
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

// deltaColumn decodes one delta column, page after page, row group after
// row group.
type deltaColumn struct {
	rdr   *file.Reader
	col   int
	field arrow.Field
	group int // the next row group to open
	pages file.PageReader
	// groupLeft is the rows of the open row group that no page has held
	// yet: a page may hold no more (its header could ask for any amount of
	// memory), and the group's pages must hold them all.
	groupLeft int64
	vals      []uint64 // the current page's values
	at        int      // the first of vals not yet read
	scratch   []byte
}

// read returns the next n values as an array of the column's type,
// allocated from mem.
func (d *deltaColumn) read(mem memory.Allocator, n int) (arrow.Array, error) {
	width := 8
	if d.field.Type.ID() == arrow.INT32 {
		width = 4
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * width)
	out := buf.Bytes()
	for i := 0; i < n; {
		if d.at == len(d.vals) {
			if err := d.nextPage(); err != nil {
				buf.Release()
				return nil, err
			}
			continue
		}
		k := min(n-i, len(d.vals)-d.at)
		if width == 8 {
			copy(arrow.Uint64Traits.CastFromBytes(out)[i:i+k], d.vals[d.at:d.at+k])
		} else {
			narrow(arrow.Uint32Traits.CastFromBytes(out)[i:i+k], d.vals[d.at:d.at+k])
		}
		i, d.at = i+k, d.at+k
	}
	data := array.NewData(d.field.Type, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	buf.Release()
	return array.MakeFromData(data), nil
}

// narrow stores the low 32 bits of each of src in dst.
func narrow(dst []uint32, src []uint64) {
	for i, v := range src {
		dst[i] = uint32(v)
	}
}

// nextPage decodes the column's next data page into vals.
func (d *deltaColumn) nextPage() error {
	for d.pages == nil || !d.pages.Next() {
		if d.pages != nil {
			if err := d.pages.Err(); err != nil {
				return err
			}
			if d.groupLeft != 0 {
				return fmt.Errorf("%w: row group %d: %d rows in no page", errDelta, d.group-1, d.groupLeft)
			}
		}
		if d.group == d.rdr.NumRowGroups() {
			return fmt.Errorf("%w: the column has fewer rows than the file", errDelta)
		}
		pages, err := d.rdr.RowGroup(d.group).GetColumnPageReader(d.col)
		if err != nil {
			return err
		}
		d.pages, d.groupLeft, d.group = pages, d.rdr.RowGroup(d.group).NumRows(), d.group+1
	}
	p := d.pages.Page()
	switch p := p.(type) {
	case *file.DataPageV1:
	case *file.DataPageV2:
		if p.DefinitionLevelByteLen() != 0 || p.RepetitionLevelByteLen() != 0 {
			return fmt.Errorf("%w: levels in a page of a required column", errDelta)
		}
	default:
		return fmt.Errorf("%w: a %T where its data pages are", errDelta, p)
	}
	if e := parquet.Encoding(p.Encoding()); e != parquet.Encodings.DeltaBinaryPacked {
		return fmt.Errorf("%w: a page encoded %s", errDelta, e)
	}
	n := int64(p.NumValues())
	if n > d.groupLeft {
		return fmt.Errorf("%w: a page of %d values in row group %d, which has %d rows left", errDelta, n, d.group-1, d.groupLeft)
	}
	d.groupLeft -= n
	var err error
	d.vals, err = decodeDelta(d.vals, p.Data(), int(n), &d.scratch)
	d.at = 0
	return err
}
