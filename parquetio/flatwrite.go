package parquetio

// Arrow's Parquet writer copies every value through typed encoder buffers
// that grow as they go and keeps page statistics it then drops (with
// arrow/go v15 a 1000-partition merge spent 40% of its CPU in it, a third
// of that in snappy). Against arrow-go v18.8.0 it is still slower on every
// encoding this file writes (BenchmarkCodecs, 256K rows, write time
// Arrow's / this file's, median of rounds back to back on a loaded 2-core
// machine, 2026-11-28, commit f3ddca4): delta int64 1.2-4.1 (random
// values 1.4), plain int64 snappy 2.2, plain float64 1.7-1.9 (nullable
// 1.5-1.8), plain strings snappy 1.5, DELTA_LENGTH_BYTE_ARRAY strings 2.2,
// dictionary int64 1.5-1.6 and strings 2.6 (nullable 4.3);
// BenchmarkWriteFlat (1M rows: two delta int64, a float64 and a string)
// 173-275 ms against 488-1856 ms, with dictionaries 257-439 against
// 624-1346 ms. This file writes the simple files itself: flat columns of
// int32, int64, float, double, string and binary, required or nullable,
// plain, DELTA_BINARY_PACKED or dictionary-encoded (flatdict.go),
// uncompressed or snappy. Pages are encoded straight from the Arrow
// buffers; the footer, the column chunks' metadata and their statistics
// are built by Arrow's metadata package, so they are what Arrow's writer
// would have written. Every other file is Arrow's to write.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/golang/snappy"
)

// pageTarget is about the most plain-encoded value bytes of a page, as
// Arrow's default data page size.
const pageTarget = 1 << 20

// flatCol is how one column is written by a flatWriter.
type flatCol struct {
	id       arrow.Type // INT32, INT64, FLOAT32, FLOAT64, STRING or BINARY
	width    int        // bytes a value, 0 for strings and binaries
	delta    bool       // DELTA_BINARY_PACKED integers or DELTA_LENGTH_BYTE_ARRAY strings and binaries, else PLAIN
	snappy   bool       // pages compressed with snappy, else not at all
	optional bool       // definition levels precede the values
	dict     bool       // dictionary-encoded if the dictionary fits its page
	descr    *schema.Column
}

// flatWidths are the Arrow types a flatWriter writes, with their value
// width (0: variable).
var flatWidths = map[arrow.Type]int{arrow.INT32: 4, arrow.INT64: 8, arrow.FLOAT32: 4, arrow.FLOAT64: 8, arrow.STRING: 0, arrow.BINARY: 0}

// deltaTypes are the Arrow types a flatWriter can delta-encode (see
// deltaEncoding).
var deltaTypes = map[arrow.Type]bool{arrow.INT32: true, arrow.INT64: true, arrow.STRING: true, arrow.BINARY: true}

// deltaEncoding is the delta encoding of a column of Arrow type id:
// DELTA_BINARY_PACKED for integers, DELTA_LENGTH_BYTE_ARRAY (the values'
// lengths DELTA_BINARY_PACKED, then the values one after another) for
// strings and binaries.
func deltaEncoding(id arrow.Type) parquet.Encoding {
	if byteArray(id) {
		return parquet.Encodings.DeltaLengthByteArray
	}
	return parquet.Encodings.DeltaBinaryPacked
}

// byteArray reports whether Arrow type id is one a flatWriter writes as
// BYTE_ARRAY: string or binary.
func byteArray(id arrow.Type) bool { return id == arrow.STRING || id == arrow.BINARY }

// flatColumns returns how a flatWriter writes each column of arrSchema
// (sch is its Parquet schema), or false if some column is not simple: not
// a top-level column of a type of flatWidths, or compressed with another
// codec than snappy or none.
func flatColumns(arrSchema *arrow.Schema, sch *schema.Schema, plans map[string]colPlan, cfg WriteConfig) ([]flatCol, bool) {
	if sch.NumColumns() != arrSchema.NumFields() {
		return nil, false
	}
	cols := make([]flatCol, arrSchema.NumFields())
	for i, f := range arrSchema.Fields() {
		width, ok := flatWidths[f.Type.ID()]
		descr := sch.Column(i)
		p := plans[f.Name]
		codec := p.codec
		if codec == "" {
			codec = cfg.Compression
		}
		maxDef := int16(0)
		if f.Nullable {
			maxDef = 1
		}
		switch {
		case !ok, !topLevel(descr, f.Name), descr.MaxDefinitionLevel() != maxDef,
			codec != Snappy && codec != Uncompressed,
			p.delta && !deltaTypes[f.Type.ID()]:
			return nil, false
		}
		cols[i] = flatCol{id: f.Type.ID(), width: width, delta: p.delta, snappy: codec == Snappy, optional: f.Nullable,
			dict: !(cfg.NoDictionary || p.noDict || p.delta), descr: descr}
	}
	return cols, true
}

// flatWriter writes a Parquet file of simple columns (see flatColumns).
// Records are held until their row group is full, then the group is
// written column after column.
type flatWriter struct {
	out       *posWriter
	props     *parquet.WriterProperties
	fmb       *metadata.FileMetaDataBuilder
	cols      []flatCol
	groupRows int64
	pending   []arrow.Record // the open row group's rows
	rows      int64          // in pending
	ordinal   int16
	// page is a page's bytes before compression: body, or the values
	// themselves when they need no encoding (see encodePage)
	page []byte
	*pageBufs
}

// pageBufs are a flatWriter's page buffers, kept from file to file
// (pageBufPool) until abort returns them: a job writes a thousand output
// files of a page or so per column, and each file's writer would otherwise
// grow its buffers afresh (BenchmarkWriteFlat: 7.8 MB allocated a file
// without the pool, 0.6 MB with it).
type pageBufs struct {
	body, zip []byte  // a page's encoded and compressed bytes
	head      []byte  // a page header
	ints      []int64 // a page's integers gathered
}

var pageBufPool = sync.Pool{New: func() any { return new(pageBufs) }}

// posWriter counts the bytes written through it.
type posWriter struct {
	w   *bufio.Writer
	pos int64
}

func (p *posWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

// newFlatWriter starts a file of arrSchema on w, or returns nil if a
// column is not simple. The file's key-value metadata are the schema's and
// the serialized Arrow schema, as pqarrow's writer stores them.
func newFlatWriter(w *bufio.Writer, arrSchema *arrow.Schema, props *parquet.WriterProperties, plans map[string]colPlan, cfg WriteConfig) (*flatWriter, error) {
	sch, err := pqarrow.ToParquet(arrSchema, props, arrowProps())
	if err != nil {
		return nil, err
	}
	cols, ok := flatColumns(arrSchema, sch, plans, cfg)
	if !ok {
		return nil, nil
	}
	meta := make(metadata.KeyValueMetadata, 0, arrSchema.Metadata().Len()+1)
	for i, k := range arrSchema.Metadata().Keys() {
		meta.Append(k, arrSchema.Metadata().Values()[i])
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(arrSchema, memory.DefaultAllocator)))
	f := &flatWriter{out: &posWriter{w: w}, props: props, cols: cols, groupRows: cfg.RowGroupRows,
		fmb: metadata.NewFileMetadataBuilder(sch, props, meta), pageBufs: pageBufPool.Get().(*pageBufs)}
	if _, err := f.out.Write([]byte("PAR1")); err != nil {
		return nil, err
	}
	return f, nil
}

// write adds the rows of rec, writing every row group it fills. rec is
// retained until its group is written. Its columns of fields that are not
// nullable hold no nulls (Writer.Write checks).
func (f *flatWriter) write(rec arrow.Record) error {
	rec.Retain()
	for rec.NumRows() > 0 {
		room := f.groupRows - f.rows
		if rec.NumRows() <= room {
			f.pending, f.rows = append(f.pending, rec), f.rows+rec.NumRows()
			if f.rows < f.groupRows {
				return nil
			}
			return f.flush()
		}
		head, rest := rec.NewSlice(0, room), rec.NewSlice(room, rec.NumRows())
		rec.Release()
		f.pending, f.rows, rec = append(f.pending, head), f.groupRows, rest
		if err := f.flush(); err != nil {
			rec.Release()
			return err
		}
	}
	rec.Release()
	return nil
}

// flush writes the pending rows as a row group.
func (f *flatWriter) flush() error {
	defer f.release()
	if f.rows == 0 {
		return nil
	}
	rgb := f.fmb.AppendRowGroup()
	var total int64
	for i := range f.cols {
		n, err := f.writeColumn(rgb.NextColumnChunk(), i)
		if err != nil {
			return fmt.Errorf("column %s: %w", f.cols[i].descr.Name(), err)
		}
		total += n
	}
	rgb.SetNumRows(int(f.rows))
	if err := rgb.Finish(total, f.ordinal); err != nil {
		return err
	}
	f.ordinal++
	return nil
}

// release drops the pending records.
func (f *flatWriter) release() {
	for _, r := range f.pending {
		r.Release()
	}
	clear(f.pending)
	f.pending, f.rows = f.pending[:0], 0
}

// close writes any pending rows and the footer.
func (f *flatWriter) close() error {
	if err := f.flush(); err != nil {
		return err
	}
	md, err := f.fmb.Finish()
	if err != nil {
		return err
	}
	n, err := md.WriteTo(f.out, nil)
	if err != nil {
		return err
	}
	var tail [8]byte
	binary.LittleEndian.PutUint32(tail[:4], uint32(n))
	copy(tail[4:], "PAR1")
	_, err = f.out.Write(tail[:])
	return err
}

// abort drops the pending records and returns the page buffers to their
// pool; it is the writer's last call (Writer calls it after close too), and
// may be repeated.
func (f *flatWriter) abort() {
	f.release()
	if f.pageBufs != nil {
		f.page = nil
		pageBufPool.Put(f.pageBufs)
		f.pageBufs = nil
	}
}

// segment is rows [lo, hi) of one array.
type segment struct {
	a      arrow.Array
	lo, hi int
}

// writeColumn writes column i of the pending rows as one column chunk and
// returns the bytes its pages took (headers included).
func (f *flatWriter) writeColumn(ccb *metadata.ColumnChunkMetaDataBuilder, i int) (int64, error) {
	c := f.cols[i]
	var dict *dictBuilder
	if c.dict {
		b := dictBuilders.Get().(*dictBuilder)
		defer dictBuilders.Put(b)
		b.reset(c.width, int(f.props.DictionaryPageSizeLimit()))
		if b.build(f.pending, i) {
			dict = b
		}
	}
	info := metadata.ChunkMetaInfo{IndexPageOffset: -1}
	var encStats metadata.EncodingStats
	if dict != nil {
		info.DictPageOffset = f.out.pos
		if err := f.writeDictPage(c, dict, &info); err != nil {
			return 0, err
		}
		encStats.DictEncodingStats = map[parquet.Encoding]int32{f.props.DictionaryPageEncoding(): 1}
	}
	info.DataPageOffset = f.out.pos
	encoding := f.encoding(c, dict != nil)
	cs := chunkStats{st: metadata.NewStatistics(c.descr, memory.DefaultAllocator)}
	pages, used, width := int32(0), 0, 0
	if dict != nil {
		width = dict.bitWidth()
	}
	for page := range f.pages(i) {
		var idx []uint32
		if dict != nil {
			idx = dict.idx[used:]
		}
		vals, nulls := f.encodePage(c, page, dict != nil, idx, width)
		used += vals - nulls
		if dict != nil {
			cs.count(vals, nulls) // the least and greatest: fromDict
		} else {
			cs.add(c, page, vals, nulls)
		}
		hdr, data, err := f.finishPage(c, vals, encoding)
		if err != nil {
			return 0, err
		}
		if err := f.writePage(hdr, data, &info); err != nil {
			return 0, err
		}
		info.NumValues += int64(vals)
		pages++
	}
	if dict != nil {
		cs.fromDict(c, dict)
	}
	if err := cs.set(ccb, f.props, c, f.rows); err != nil {
		return 0, err
	}
	encStats.DataEncodingStats = map[parquet.Encoding]int32{encoding: pages}
	if err := ccb.Finish(info, dict != nil, false, encStats); err != nil {
		return 0, err
	}
	if _, err := ccb.WriteTo(f.out); err != nil {
		return 0, err
	}
	return info.CompressedSize, nil
}

// encoding returns the encoding of a column's data pages.
func (f *flatWriter) encoding(c flatCol, dict bool) parquet.Encoding {
	switch {
	case dict:
		return f.props.DictionaryIndexEncoding()
	case c.delta:
		return deltaEncoding(c.id)
	}
	return parquet.Encodings.Plain
}

// writePage writes a page's header and bytes and counts them in info.
func (f *flatWriter) writePage(hdr, data []byte, info *metadata.ChunkMetaInfo) error {
	if _, err := f.out.Write(hdr); err != nil {
		return err
	}
	if _, err := f.out.Write(data); err != nil {
		return err
	}
	info.UncompressedSize += int64(len(hdr) + len(f.page))
	info.CompressedSize += int64(len(hdr) + len(data))
	return nil
}

// writeDictPage writes the dictionary page of a chunk.
func (f *flatWriter) writeDictPage(c flatCol, dict *dictBuilder, info *metadata.ChunkMetaInfo) error {
	f.page = dict.page
	data := f.compress(c)
	f.head = appendDictPageHeader(f.head[:0], int32(len(f.page)), int32(len(data)), int32(dict.entries()),
		int32(f.props.DictionaryPageEncoding()))
	return f.writePage(f.head, data, info)
}

// chunkStats gathers a column chunk's statistics.
type chunkStats struct {
	st    metadata.TypedStatistics
	bytes byteRange // of a string or binary column
}

// add adds a page's values.
func (cs *chunkStats) add(c flatCol, page []segment, vals, nulls int) {
	if c.width > 0 {
		updateStats(cs.st, page, nulls)
		return
	}
	cs.bytes.addPage(page)
	cs.count(vals, nulls)
}

// count counts a page's values and nulls alone.
func (cs *chunkStats) count(vals, nulls int) {
	cs.st.IncNulls(int64(nulls))
	cs.st.IncNumValues(int64(vals - nulls))
}

// fromDict takes a dictionary chunk's least and greatest values from its
// dictionary, which holds each of its values once: a few thousand entries
// to compare instead of every row (a float or string column's statistics
// cost a 1000-partition merge 2% of its CPU). The order of the values does
// not change the statistics: Arrow's float statistics leave NaNs out and
// give a zero minimum as -0 and a zero maximum as +0.
func (cs *chunkStats) fromDict(c flatCol, d *dictBuilder) {
	n := int64(d.entries())
	if n == 0 {
		return
	}
	if c.width == 0 {
		for k := range int(n) {
			cs.bytes.add(d.entry(k))
		}
		return
	}
	switch st := cs.st.(type) {
	case *metadata.Int32Statistics:
		st.Update(arrow.Int32Traits.CastFromBytes(d.page), 0)
	case *metadata.Int64Statistics:
		st.Update(arrow.Int64Traits.CastFromBytes(d.page), 0)
	case *metadata.Float32Statistics:
		st.Update(arrow.Float32Traits.CastFromBytes(d.page), 0)
	case *metadata.Float64Statistics:
		st.Update(arrow.Float64Traits.CastFromBytes(d.page), 0)
	}
	cs.st.IncNumValues(-n) // Update counted the entries; count counted the values
}

// set gives the statistics to the chunk's metadata (copied: the values
// they were taken from are released after the row group), limited in size
// as Arrow's writer limits them.
func (cs *chunkStats) set(ccb *metadata.ColumnChunkMetaDataBuilder, props *parquet.WriterProperties, c flatCol, rows int64) error {
	if r := cs.bytes; r.lo != nil {
		cs.st.(*metadata.ByteArrayStatistics).SetMinMax(r.lo, r.hi)
	}
	enc, err := cs.st.Encode()
	if err != nil {
		return err
	}
	enc.ApplyStatSizeLimits(int(props.MaxStatsSizeFor(c.descr.Path())))
	enc.Signed = c.descr.SortOrder() == schema.SortSIGNED
	if rows > 0 && enc.IsSet() {
		ccb.SetStats(enc)
	}
	return nil
}

// pages yields the pending rows of column i cut into pages of about
// pageTarget plain bytes each, a page being one or more segments.
func (f *flatWriter) pages(i int) func(yield func([]segment) bool) {
	width := f.cols[i].width
	return func(yield func([]segment) bool) {
		var page []segment
		size := 0
		for _, rec := range f.pending {
			a := rec.Column(i)
			for lo := 0; lo < a.Len(); {
				hi, n := pageEnd(a, lo, width, pageTarget-size)
				page, size = append(page, segment{a: a, lo: lo, hi: hi}), size+n
				lo = hi
				if size >= pageTarget {
					if !yield(page) {
						return
					}
					page, size = page[:0], 0
				}
			}
		}
		if len(page) > 0 {
			yield(page)
		}
	}
}

// pageEnd returns the row after the rows of a from lo that fill room
// plain bytes (at least one row, at most the array's end), and their bytes.
func pageEnd(a arrow.Array, lo, width, room int) (hi, n int) {
	if width > 0 {
		hi = min(a.Len(), lo+max(1, (room+width-1)/width))
		return hi, (hi - lo) * width
	}
	offs := byteOffsets(a)
	base := int(offs[lo])
	k := sort.Search(a.Len()-lo, func(k int) bool { return int(offs[lo+k+1])-base+4*(k+1) >= room })
	hi = min(a.Len(), lo+k+1)
	return hi, int(offs[hi]) - base + 4*(hi-lo)
}

// byteOffsets returns the value offsets of a string or binary array: entry
// r of them is where row r starts in byteValues.
func byteOffsets(a arrow.Array) []int32 {
	switch a := a.(type) {
	case *array.String:
		return a.ValueOffsets()
	case *array.Binary:
		return a.ValueOffsets()
	}
	panic(fmt.Sprintf("parquetio: %s is not a string or binary array", a.DataType()))
}

// byteValues returns the whole value buffer of a string or binary array,
// which its value offsets index.
func byteValues(a arrow.Array) []byte {
	if b := a.Data().Buffers()[2]; b != nil {
		return b.Bytes()
	}
	return nil
}

// encodePage encodes a page's levels and values into f.page and returns
// how many values (nulls included) it holds and how many are null. A page
// of one segment of a required fixed-width column written plain is its
// values' bytes in the array; other pages are encoded into f.body. A
// dictionary column's (dict) values are the first of idx, its indices, of
// width w; a page of nulls alone still gives the width.
func (f *flatWriter) encodePage(c flatCol, page []segment, dict bool, idx []uint32, w int) (vals, nulls int) {
	body := f.body[:0]
	for _, s := range page {
		vals += s.hi - s.lo
		nulls += nullsIn(s)
	}
	if c.optional {
		body = appendDefLevels(body, page, vals, nulls)
	}
	switch {
	case dict:
		body = appendIndices(body, idx[:vals-nulls], w)
	case c.delta && c.width == 0:
		body = appendDelta(body, arrow.INT32, f.pageLens(page, nulls))
		body = appendValueBytes(body, page, nulls)
	case c.delta:
		body = appendDelta(body, c.id, f.pageInts(c.id, page, nulls))
	case c.width > 0 && !c.optional && len(page) == 1:
		f.body, f.page = body, fixedBytes(page[0], c.width) // no nulls (see write)
		return vals, nulls
	case c.width > 0:
		body = appendPlainFixed(body, page, c.width, nulls)
	default:
		body = appendPlainBytes(body, page, nulls)
	}
	f.body, f.page = body, body
	return vals, nulls
}

// nullsIn returns the nulls among a segment's rows.
func nullsIn(s segment) int {
	if s.a.NullN() == 0 {
		return 0
	}
	d := s.a.Data()
	return (s.hi - s.lo) - bitutil.CountSetBits(d.Buffers()[0].Bytes(), d.Offset()+s.lo, s.hi-s.lo)
}

// finishPage compresses f.page if the column wants it and returns the page
// header and the page's bytes to write.
func (f *flatWriter) finishPage(c flatCol, vals int, encoding parquet.Encoding) (hdr, data []byte, err error) {
	if len(f.page) > 1<<31-1 || vals > 1<<31-1 {
		return nil, nil, fmt.Errorf("page of %d values, %d bytes: too large", vals, len(f.page))
	}
	data = f.compress(c)
	f.head = appendPageHeader(f.head[:0], int32(len(f.page)), int32(len(data)), int32(vals), int32(encoding))
	return f.head, data, nil
}

// compress returns f.page compressed as the column wants it.
func (f *flatWriter) compress(c flatCol) []byte {
	if !c.snappy {
		return f.page
	}
	f.zip = snappy.Encode(f.zip[:cap(f.zip)], f.page)
	return f.zip
}

// Thrift compact protocol: field types, and a field header for a field
// whose ID is d above the previous field's.
const (
	thriftFalse  = 2
	thriftI32    = 5
	thriftStruct = 12
)

func thriftField(d, typ byte) byte { return d<<4 | typ }

// appendHeaderStart appends the fields of a Thrift (compact protocol)
// PageHeader that every page has: 1 type, 2 uncompressed_page_size and 3
// compressed_page_size.
func appendHeaderStart(dst []byte, typ int64, uncompressed, compressed int32) []byte {
	dst = append(dst, thriftField(1, thriftI32))
	dst = binary.AppendVarint(dst, typ)
	dst = append(dst, thriftField(1, thriftI32))
	dst = binary.AppendVarint(dst, int64(uncompressed))
	dst = append(dst, thriftField(1, thriftI32))
	return binary.AppendVarint(dst, int64(compressed))
}

// appendI32 appends an i32 field d above the previous one.
func appendI32(dst []byte, d byte, v int64) []byte {
	return binary.AppendVarint(append(dst, thriftField(d, thriftI32)), v)
}

// appendPageHeader appends a PageHeader of a DATA_PAGE (version 1) with
// the given sizes, value count and encoding, its levels RLE-encoded and
// without statistics (the column chunk has them).
func appendPageHeader(dst []byte, uncompressed, compressed, vals, encoding int32) []byte {
	const dataPage, rle = 0, 3 // PageType DATA_PAGE, Encoding RLE
	dst = appendHeaderStart(dst, dataPage, uncompressed, compressed)
	dst = append(dst, thriftField(2, thriftStruct)) // 5: data_page_header
	dst = appendI32(dst, 1, int64(vals))            // 1: num_values
	dst = appendI32(dst, 1, int64(encoding))        // 2: encoding
	dst = appendI32(dst, 1, rle)                    // 3: definition_level_encoding
	dst = appendI32(dst, 1, rle)                    // 4: repetition_level_encoding
	return append(dst, 0, 0)                        // end of data_page_header, of the header
}

// appendDictPageHeader appends a PageHeader of a DICTIONARY_PAGE of the
// given sizes, entries and encoding, not sorted.
func appendDictPageHeader(dst []byte, uncompressed, compressed, entries, encoding int32) []byte {
	const dictPage = 2 // PageType DICTIONARY_PAGE
	dst = appendHeaderStart(dst, dictPage, uncompressed, compressed)
	dst = append(dst, thriftField(4, thriftStruct)) // 7: dictionary_page_header
	dst = appendI32(dst, 1, int64(entries))         // 1: num_values
	dst = appendI32(dst, 1, int64(encoding))        // 2: encoding
	dst = append(dst, thriftField(1, thriftFalse))  // 3: is_sorted
	return append(dst, 0, 0)
}

// appendDefLevels appends the definition levels of a page of an optional
// column (level 1 a value, 0 a null), as data page version 1 has them: a
// 4-byte length, then the RLE / bit-packed hybrid of width 1. Without
// nulls that is one RLE run; else the validity bits, bit-packed.
func appendDefLevels(dst []byte, page []segment, vals, nulls int) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	if nulls == 0 {
		dst = binary.AppendUvarint(dst, uint64(vals)<<1)
		dst = append(dst, 1)
	} else {
		groups := (vals + 7) / 8
		dst = binary.AppendUvarint(dst, uint64(groups)<<1|1)
		start := len(dst)
		dst = slices.Grow(dst, groups)[:start+groups]
		bitmap, k := dst[start:], 0
		clear(bitmap)
		for _, s := range page {
			for r := s.lo; r < s.hi; r++ {
				if s.a.IsValid(r) {
					bitutil.SetBit(bitmap, k)
				}
				k++
			}
		}
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// appendPlainFixed appends the non-null values of a page of a fixed-width
// column, PLAIN: their little-endian bytes.
func appendPlainFixed(dst []byte, page []segment, width, nulls int) []byte {
	for _, s := range page {
		raw := fixedBytes(s, width)
		if nulls == 0 {
			dst = append(dst, raw...)
			continue
		}
		for r := s.lo; r < s.hi; r++ {
			if s.a.IsValid(r) {
				dst = append(dst, raw[(r-s.lo)*width:(r-s.lo+1)*width]...)
			}
		}
	}
	return dst
}

// fixedBytes returns the bytes of a segment of a fixed-width array.
func fixedBytes(s segment, width int) []byte {
	d := s.a.Data()
	return d.Buffers()[1].Bytes()[(d.Offset()+s.lo)*width : (d.Offset()+s.hi)*width]
}

// appendPlainBytes appends the non-null values of a page of a string or
// binary column, PLAIN: each one's 4-byte length, then its bytes.
func appendPlainBytes(dst []byte, page []segment, nulls int) []byte {
	for _, s := range page {
		offs, data := byteOffsets(s.a), byteValues(s.a)
		for r := s.lo; r < s.hi; r++ {
			if nulls > 0 && s.a.IsNull(r) {
				continue
			}
			v := data[offs[r]:offs[r+1]]
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
			dst = append(dst, v...)
		}
	}
	return dst
}

// appendValueBytes appends the bytes of the non-null values of a page of a
// string or binary column one after another (DELTA_LENGTH_BYTE_ARRAY's
// values): each segment's values whole, as they lie in its array, when it
// has no nulls.
func appendValueBytes(dst []byte, page []segment, nulls int) []byte {
	for _, s := range page {
		offs, data := byteOffsets(s.a), byteValues(s.a)
		if nulls == 0 || s.a.NullN() == 0 {
			dst = append(dst, data[offs[s.lo]:offs[s.hi]]...)
			continue
		}
		for r := s.lo; r < s.hi; r++ {
			if s.a.IsValid(r) {
				dst = append(dst, data[offs[r]:offs[r+1]]...)
			}
		}
	}
	return dst
}

// byteRange is the least and greatest of some values, in byte order
// (Parquet's order for strings and binaries): slices of the values, nil
// before the first. Most comparisons are decided by the values' first 8
// bytes as numbers (prefix8, kept for lo and hi).
type byteRange struct {
	lo, hi   []byte
	plo, phi uint64
}

// addPage adds the non-null values of a page.
func (r *byteRange) addPage(page []segment) {
	for _, s := range page {
		offs, data, nulls := byteOffsets(s.a), byteValues(s.a), s.a.NullN() > 0
		for i := s.lo; i < s.hi; i++ {
			if !nulls || s.a.IsValid(i) {
				r.add(data[offs[i]:offs[i+1]:offs[i+1]])
			}
		}
	}
}

// add adds one value.
func (r *byteRange) add(v []byte) {
	if v == nil {
		v = []byte{} // nil means none yet
	}
	pv := prefix8(v)
	switch {
	case r.lo == nil:
		r.lo, r.hi, r.plo, r.phi = v, v, pv, pv
	case pv < r.plo || pv == r.plo && bytes.Compare(v, r.lo) < 0:
		r.lo, r.plo = v, pv
	case pv > r.phi || pv == r.phi && bytes.Compare(v, r.hi) > 0:
		r.hi, r.phi = v, pv
	}
}

// prefix8 returns the first 8 bytes of v as a big-endian number, zero
// padded: values whose prefixes differ are in the order of their prefixes
// (a shorter value's padding sorts before any byte; equal prefixes say
// nothing).
func prefix8(v []byte) uint64 {
	if len(v) >= 8 {
		return binary.BigEndian.Uint64(v)
	}
	var b [8]byte
	copy(b[:], v)
	return binary.BigEndian.Uint64(b[:])
}

// pageInts returns the non-null values of a page of an integer column,
// widened to int64: the values themselves (no copy) when the page is one
// segment of an int64 column without nulls, else gathered into f.ints.
func (f *flatWriter) pageInts(id arrow.Type, page []segment, nulls int) []int64 {
	if id == arrow.INT64 && nulls == 0 && len(page) == 1 {
		s := page[0]
		return s.a.(*array.Int64).Int64Values()[s.lo:s.hi]
	}
	out := f.ints[:0]
	for _, s := range page {
		for r := s.lo; r < s.hi; r++ {
			if nulls > 0 && s.a.IsNull(r) {
				continue
			}
			switch a := s.a.(type) {
			case *array.Int64:
				out = append(out, a.Value(r))
			case *array.Int32:
				out = append(out, int64(a.Value(r)))
			}
		}
	}
	f.ints = out
	return out
}

// pageLens returns the lengths of the non-null values of a page of a
// string or binary column, gathered into f.ints.
func (f *flatWriter) pageLens(page []segment, nulls int) []int64 {
	out := f.ints[:0]
	for _, s := range page {
		offs := byteOffsets(s.a)
		for r := s.lo; r < s.hi; r++ {
			if nulls > 0 && s.a.IsNull(r) {
				continue
			}
			out = append(out, int64(offs[r+1]-offs[r]))
		}
	}
	f.ints = out
	return out
}

// updateStats adds the non-null values of a page of a fixed-width column
// to st.
func updateStats(st metadata.TypedStatistics, page []segment, nulls int) {
	for _, s := range page {
		n := int64(nullsIn(s))
		if nulls == 0 || n == 0 {
			switch a := s.a.(type) {
			case *array.Int32:
				st.(*metadata.Int32Statistics).Update(a.Int32Values()[s.lo:s.hi], 0)
			case *array.Int64:
				st.(*metadata.Int64Statistics).Update(a.Int64Values()[s.lo:s.hi], 0)
			case *array.Float32:
				st.(*metadata.Float32Statistics).Update(a.Float32Values()[s.lo:s.hi], 0)
			case *array.Float64:
				st.(*metadata.Float64Statistics).Update(a.Float64Values()[s.lo:s.hi], 0)
			}
			continue
		}
		d := s.a.Data()
		bits, off := d.Buffers()[0].Bytes(), int64(d.Offset()+s.lo)
		switch a := s.a.(type) {
		case *array.Int32:
			st.(*metadata.Int32Statistics).UpdateSpaced(a.Int32Values()[s.lo:s.hi], bits, off, n)
		case *array.Int64:
			st.(*metadata.Int64Statistics).UpdateSpaced(a.Int64Values()[s.lo:s.hi], bits, off, n)
		case *array.Float32:
			st.(*metadata.Float32Statistics).UpdateSpaced(a.Float32Values()[s.lo:s.hi], bits, off, n)
		case *array.Float64:
			st.(*metadata.Float64Statistics).UpdateSpaced(a.Float64Values()[s.lo:s.hi], bits, off, n)
		}
	}
}

// Delta encoding's layout, as Arrow's writer (and most others) chooses it:
// blocks of 128 values in 4 miniblocks of 32.
const (
	deltaBlock     = 128
	deltaMiniCount = 4
	deltaMini      = deltaBlock / deltaMiniCount
)

// appendDelta appends vs DELTA_BINARY_PACKED: a header (block size,
// miniblocks a block, value count, first value), then per block of 128
// deltas its least delta and the 4 bit widths of its miniblocks, then each
// miniblock's deltas less the least, bit-packed. An int32 column's deltas
// wrap at 32 bits, as its readers add them; an int64 column's at 64.
func appendDelta(dst []byte, id arrow.Type, vs []int64) []byte {
	dst = binary.AppendUvarint(dst, deltaBlock)
	dst = binary.AppendUvarint(dst, deltaMiniCount)
	dst = binary.AppendUvarint(dst, uint64(len(vs)))
	if len(vs) == 0 {
		return binary.AppendVarint(dst, 0)
	}
	dst = binary.AppendVarint(dst, vs[0])
	var d [deltaBlock]uint64
	for i := 1; i < len(vs); i += deltaBlock {
		n := min(deltaBlock, len(vs)-i)
		least := blockDeltas(&d, vs[i-1:i+n], id == arrow.INT32)
		dst = binary.AppendVarint(dst, least)
		var widths [deltaMiniCount]int
		minis := (n + deltaMini - 1) / deltaMini
		for m := range minis {
			var or uint64
			for _, v := range d[m*deltaMini : (m+1)*deltaMini] {
				or |= v
			}
			widths[m] = bits.Len64(or)
		}
		for _, w := range widths {
			dst = append(dst, byte(w))
		}
		for m := range minis {
			dst = packBits(dst, d[m*deltaMini:(m+1)*deltaMini], deltaMini, widths[m])
		}
	}
	return dst
}

// blockDeltas fills d with the deltas between consecutive values of vs
// (at most 129 values), less the least of them, which it returns; entries
// of d past the deltas are zero (a last miniblock's padding). narrow makes
// deltas wrap at 32 bits.
func blockDeltas(d *[deltaBlock]uint64, vs []int64, narrow bool) int64 {
	n := len(vs) - 1
	if narrow {
		least := int32(vs[1]) - int32(vs[0])
		for j := range n {
			least = min(least, int32(vs[j+1])-int32(vs[j]))
		}
		for j := range n {
			d[j] = uint64(uint32(int32(vs[j+1]) - int32(vs[j]) - least))
		}
		clear(d[n:])
		return int64(least)
	}
	least := vs[1] - vs[0]
	for j := range n {
		least = min(least, vs[j+1]-vs[j])
	}
	for j := range n {
		d[j] = uint64(vs[j+1] - vs[j] - least)
	}
	clear(d[n:])
	return least
}

// packBits appends n values of w bits each, least significant bit first:
// those of vs, then zeros up to n. Every value is below 1<<w, and n*w is a
// multiple of 8 (n a multiple of 8 will do).
func packBits[T uint32 | uint64](dst []byte, vs []T, n, w int) []byte {
	if w == 0 {
		return dst
	}
	var acc uint64
	bits := 0 // in acc
	for k := range n {
		var v uint64
		if k < len(vs) {
			v = uint64(vs[k])
		}
		acc |= v << bits
		bits += w
		if bits >= 64 {
			dst = binary.LittleEndian.AppendUint64(dst, acc)
			bits -= 64
			acc = 0
			if bits > 0 {
				acc = v >> (w - bits)
			}
		}
	}
	for ; bits > 0; bits -= 8 {
		dst = append(dst, byte(acc))
		acc >>= 8
	}
	return dst
}
