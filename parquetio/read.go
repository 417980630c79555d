package parquetio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shufflenode/shufflenode/table"
)

// DefaultBatchRows is the batch size ReadFile uses when given 0.
const DefaultBatchRows = 64 << 10

// Inputs describes a checked set of input files.
type Inputs struct {
	// Files are the paths, in the order given (one input task each).
	Files []string
	// Schema has the columns every file has (names and types in order), each
	// nullable if it is in any file, without metadata: the schema of the
	// shuffle and of its output files.
	Schema *arrow.Schema
	// Rows is the total rows of the files, from their footers.
	Rows int64
	// FileRows are the rows of each file, from its footer.
	FileRows []int64
	// Bytes is the total size of the files on disk.
	Bytes int64
}

// Glob returns the regular files matching pattern (see filepath.Match),
// sorted. No match gives an error wrapping ErrNoFiles.
func Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("parquetio: pattern %q: %w", pattern, err)
	}
	files := matches[:0]
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			files = append(files, m)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: %q matches no file", ErrNoFiles, pattern)
	}
	slices.Sort(files)
	return files, nil
}

// ReadSchema returns the Arrow schema of a Parquet file (from its footer).
func ReadSchema(path string) (*arrow.Schema, error) {
	info, err := inspect(path)
	return info.schema, err
}

// CheckInputs checks that every file is a readable Parquet file with the
// first file's schema (same column names and types in order; nullability is
// merged) and that the shuffle supports every column type. A difference
// gives ErrSchemaMismatch naming the file and the column; an unsupported
// column ErrUnsupportedType naming the file, column and type.
func CheckInputs(paths []string) (Inputs, error) {
	if len(paths) == 0 {
		return Inputs{}, fmt.Errorf("%w: empty list", ErrNoFiles)
	}
	in := Inputs{Files: paths}
	for i, p := range paths {
		info, err := inspect(p)
		if err != nil {
			return Inputs{}, err
		}
		if i == 0 {
			if err := checkSupported(p, info.schema); err != nil {
				return Inputs{}, err
			}
			in.Schema = plain(info.schema)
		} else if err := table.CheckSchema(in.Schema, info.schema); err != nil {
			return Inputs{}, fmt.Errorf("%w: %s differs from %s: %w", ErrSchemaMismatch, p, paths[0], err)
		}
		in.Schema = mergeNullable(in.Schema, info.schema)
		in.Rows += info.rows
		in.FileRows = append(in.FileRows, info.rows)
		in.Bytes += info.bytes
	}
	return in, nil
}

// plain returns schema without schema or field metadata.
func plain(schema *arrow.Schema) *arrow.Schema {
	fields := slices.Clone(schema.Fields())
	for i := range fields {
		fields[i].Metadata = arrow.Metadata{}
	}
	return arrow.NewSchema(fields, nil)
}

// mergeNullable returns base with every field nullable that is in base or
// other (which has base's columns).
func mergeNullable(base, other *arrow.Schema) *arrow.Schema {
	fields := slices.Clone(base.Fields())
	changed := false
	for i := range fields {
		if !fields[i].Nullable && other.Field(i).Nullable {
			fields[i].Nullable, changed = true, true
		}
	}
	if !changed {
		return base
	}
	return arrow.NewSchema(fields, nil)
}

// checkSupported refuses schemas with a column the shuffle cannot move.
func checkSupported(path string, schema *arrow.Schema) error {
	if _, err := table.NewCodec(schema, nil); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnsupportedType, path, err)
	}
	return nil
}

// fileInfo is what a file's footer says.
type fileInfo struct {
	schema *arrow.Schema
	rows   int64
	bytes  int64
}

// inspect reads a file's footer.
func inspect(path string) (info fileInfo, err error) {
	defer recoverRead(path, &err)
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return info, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return info, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	if info.schema, err = fr.Schema(); err != nil {
		return info, fmt.Errorf("%w: %s: schema: %w", ErrRead, path, err)
	}
	info.rows = rdr.NumRows()
	if st, err := os.Stat(path); err == nil {
		info.bytes = st.Size()
	}
	return info, nil
}

// ReadColumn reads the column named of the Parquet file at path whole, as
// one array allocated from mem (memory.DefaultAllocator when nil). The
// error wraps ErrSchemaMismatch when the file has no such column, else
// ErrRead, and names the file.
func ReadColumn(ctx context.Context, path, name string, mem memory.Allocator) (arrow.Array, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	chunks, dt, err := ReadColumnChunks(ctx, path, name, mem)
	defer func() { releaseArrays(chunks) }()
	switch {
	case err != nil:
		return nil, err
	case len(chunks) == 0:
		return array.MakeArrayOfNull(mem, dt, 0), nil
	case len(chunks) == 1:
		chunks[0].Retain()
		return chunks[0], nil
	}
	return array.Concatenate(chunks, mem)
}

// ReadColumnChunks is ReadColumn without joining the column's batches: it
// returns them in order (none for a file without rows), and the column's
// type. The caller releases them.
func ReadColumnChunks(ctx context.Context, path, name string, mem memory.Allocator) (chunks []arrow.Array, dt arrow.DataType, err error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	r, err := open(ctx, path, mem, DefaultBatchRows, name)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return chunks, r.Schema().Field(0).Type, nil
		}
		if err != nil {
			releaseArrays(chunks)
			return nil, nil, err
		}
		c := rec.Column(0)
		c.Retain()
		chunks = append(chunks, c)
	}
}

// ReadFile reads every row of a Parquet file as records of at most
// batchRows rows (DefaultBatchRows when 0), allocated from mem
// (memory.DefaultAllocator when nil). The caller must Release them. A file
// with no rows gives no records. ctx is checked between batches.
func ReadFile(ctx context.Context, path string, mem memory.Allocator, batchRows int64) (recs []arrow.Record, err error) {
	r, err := Open(ctx, path, mem, batchRows)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, nil
		}
		if err != nil {
			releaseAll(recs)
			return nil, err
		}
		rec.Retain()
		recs = append(recs, rec)
	}
}

// SafeBatchRows is the batch size to read rdr with (as pqarrow's
// ArrowReadProperties.BatchSize) when batchRows is wanted: batchRows, or,
// for a file with a nullable INT64 column stored as DELTA_BINARY_PACKED, a
// batch that never ends inside a page: whole row groups when all but the
// last have the same rows (and the last no more), else the whole file.
// Arrow v15's decoder of such a column with nulls (DecodeSpaced, which
// runs on a copy of the decoder) loses its place when a page is read in two
// parts, and fails the read. Other writers (and earlier shufflenode
// versions) write such files; this package's Writer no longer does (see
// deltaSize).
func SafeBatchRows(rdr *file.Reader, batchRows int64) int64 {
	if !nullableDelta64(rdr) {
		return batchRows
	}
	n := rdr.NumRowGroups()
	first := rdr.MetaData().RowGroup(0).NumRows()
	for i := 1; i < n; i++ {
		if rows := rdr.MetaData().RowGroup(i).NumRows(); rows > first || (rows != first && i < n-1) {
			return rdr.NumRows()
		}
	}
	return first
}

// nullableDelta64 reports whether any chunk of a nullable INT64 column of
// the file is DELTA_BINARY_PACKED.
func nullableDelta64(rdr *file.Reader) bool {
	md := rdr.MetaData()
	for c := range md.Schema.NumColumns() {
		col := md.Schema.Column(c)
		if col.PhysicalType() != parquet.Types.Int64 || col.MaxDefinitionLevel() == 0 {
			continue
		}
		for g := range rdr.NumRowGroups() {
			cc, err := md.RowGroup(g).ColumnChunk(c)
			if err == nil && slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
				return true
			}
		}
	}
	return false
}

// recordReader is what Reader reads from: Arrow's record reader, or a
// mixedReader.
type recordReader interface {
	Schema() *arrow.Schema
	Next() bool
	Record() arrow.Record
	Err() error
	Release()
}

// openRecords opens a record reader over the columns named (none: every
// column) and every row group.
func openRecords(ctx context.Context, path string, mem memory.Allocator, batchRows int64, names ...string) (recordReader, func(), int64, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	props := readProps()
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	// Read when a column's reader opens, after this: a file whose column
	// chunks all fit the buffer is read chunk by chunk, as Arrow does by
	// default (a buffer per column would cost more than the chunk).
	props.BufferedStreamEnabled = largestChunk(rdr) > readBufferBytes
	var cols []int
	for _, name := range names {
		leaf := rdr.MetaData().Schema.ColumnIndexByName(name)
		if leaf < 0 {
			rdr.Close()
			return nil, nil, 0, fmt.Errorf("%w: %s: no column %q", ErrSchemaMismatch, path, name)
		}
		cols = append(cols, leaf)
	}
	// A batch's buffers are reserved for BatchSize rows: a small file
	// (a shuffle's partition) would allocate many times its size.
	batchRows = max(1, min(SafeBatchRows(rdr, batchRows), rdr.NumRows()))
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, mem)
	if err != nil {
		rdr.Close()
		return nil, nil, 0, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	var rr recordReader
	mixed, err := newMixedReader(ctx, rdr, fr, mem, batchRows, cols)
	if mixed != nil {
		rr = mixed
	} else if err == nil {
		rr, err = fr.GetRecordReader(ctx, cols, nil)
	}
	if err != nil {
		rdr.Close()
		return nil, nil, 0, fmt.Errorf("%w: %s: %w", ErrRead, path, err)
	}
	return rr, func() { rr.Release(); rdr.Close() }, rdr.NumRows(), nil
}

// readBufferBytes is the buffer of each column's reader of a file with a
// column chunk larger than it: pages larger than it are read straight into
// their own buffers.
const readBufferBytes = 1 << 20

// readProps reads column chunks through a buffer of readBufferBytes
// (Arrow's default reads each chunk whole into memory, then copies it
// into a reader buffer of the same size: two allocations and two copies of
// every chunk, and a file's columns held whole while it is read). Pages
// stay in Go memory: Arrow v15's reader reads page bytes it has freed
// (TestWritersShareBuffers), so they must not come from a pool.
func readProps() *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = readBufferBytes
	return props
}

// largestChunk is the bytes of rdr's largest column chunk.
func largestChunk(rdr *file.Reader) int64 {
	var largest int64
	for g := range rdr.NumRowGroups() {
		rg := rdr.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			if cc, err := rg.ColumnChunk(c); err == nil {
				largest = max(largest, cc.TotalCompressedSize())
			}
		}
	}
	return largest
}

// recoverRead turns a panic of the Parquet decoder on a malformed file into
// an error wrapping ErrRead naming the file.
func recoverRead(path string, err *error) {
	if r := recover(); r != nil {
		*err = errors.Join(*err, fmt.Errorf("%w: %s: malformed file: %v", ErrRead, path, r))
	}
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
