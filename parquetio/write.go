package parquetio

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shufflenode/shufflenode/durable"
	"github.com/shufflenode/shufflenode/table"
)

// Writer streams records into one Parquet file. The file appears at its
// path only on Commit: until then the rows go to a hidden temporary file in
// the same directory.
//
// The Parquet writer behind it starts with the first Write of a record with
// rows (under Auto, whose codecs that record decides), or at Commit: this
// package's own for a file whose columns are all simple (see flatColumns),
// else Arrow's pqarrow writer.
type Writer struct {
	path   string
	schema *arrow.Schema
	cfg    WriteConfig
	tmp    *os.File
	buf    *bufio.Writer
	fw     *pqarrow.FileWriter // nil until started, and for a flat file
	flat   *flatWriter         // the writer of a file of simple columns (see flatColumns)
	plans  map[string]colPlan  // of each column, once fw started
	rows   int64
	size   int64 // of the file, once committed
	closed bool
	// held are the records written to the open row group, retained until
	// it is closed (see hold); groupRows is that group's rows.
	held      []arrow.Record
	groupRows int64
}

// Create starts a Parquet file at path with schema (stored in the file, so
// readers get the exact Arrow types back). The directory must exist.
func Create(path string, schema *arrow.Schema, cfg WriteConfig) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := pqarrow.ToParquet(schema, nil, arrowProps()); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrWrite, path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrWrite, path, err)
	}
	buf := bufPool.Get().(*bufio.Writer)
	buf.Reset(tmp)
	return &Writer{path: path, schema: schema, cfg: cfg.withDefaults(), tmp: tmp, buf: buf}, nil
}

// bufPool holds the 1 MiB write buffers of Writers: an output job writes
// one file per partition, and a new buffer for each would be a megabyte
// allocated and cleared per file.
var bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

// putBuf returns the writer's buffer to bufPool.
func (w *Writer) putBuf() {
	if w.buf != nil {
		w.buf.Reset(nil)
		bufPool.Put(w.buf)
		w.buf = nil
	}
}

// start creates the Parquet writer with the codecs chosen from rec (nil
// when there is none): this package's own for a file of simple columns
// (see flatColumns) with rows, else Arrow's.
func (w *Writer) start(rec arrow.Record) error {
	return w.startPlans(w.planFor(rec), rec != nil)
}

// startPlans creates the Parquet writer with the plans of the columns; a
// file with rows may be written by this package's own writer.
func (w *Writer) startPlans(plans map[string]colPlan, rows bool) error {
	props := w.props(plans)
	if rows && !w.cfg.arrowWriter {
		flat, err := newFlatWriter(w.buf, w.schema, props, plans, w.cfg)
		if err != nil {
			return err
		}
		if flat != nil {
			w.flat, w.plans = flat, plans
			return nil
		}
	}
	if !w.cfg.arrowNullableDelta {
		plans = noNullableDelta(w.schema, plans)
	}
	fw, err := pqarrow.NewFileWriter(w.schema, w.buf, w.props(plans), arrowProps())
	if err != nil {
		return err
	}
	w.fw, w.plans = fw, plans
	return nil
}

// noNullableDelta returns plans with every nullable column that was to be
// DELTA_BINARY_PACKED snappy-compressed plain instead: Arrow v15's writer
// dereferences nil on a delta column whose first batch of values is all
// null (a nullable int32 column that starts with a thousand nulls took
// down the process). This package's writer has no such trouble.
func noNullableDelta(schema *arrow.Schema, plans map[string]colPlan) map[string]colPlan {
	out := make(map[string]colPlan, len(plans))
	for _, f := range schema.Fields() {
		p := plans[f.Name]
		if p.delta && f.Nullable {
			p.delta, p.codec, p.noDict = false, Snappy, true
		}
		out[f.Name] = p
	}
	return out
}

// started reports whether a Parquet writer was started.
func (w *Writer) started() bool { return w.fw != nil || w.flat != nil }

// props returns the Parquet writer properties of the config with the
// plans of the columns.
func (w *Writer) props(plans map[string]colPlan) *parquet.WriterProperties {
	codec, _ := w.cfg.Compression.codec()
	opts := []parquet.WriterProperty{parquet.WithAllocator(codecMem), parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(w.cfg.RowGroupRows), parquet.WithDictionaryDefault(!w.cfg.NoDictionary)}
	for name, p := range plans {
		codec, _ := p.codec.codec()
		// The plan chose the dictionary: Arrow's writer keeps it for an
		// uncompressed column too, as the flat writer does (its default
		// drops a dictionary that does not beat plain on the first page).
		opts = append(opts, parquet.WithCompressionFor(name, codec), parquet.WithDictionaryCostFallbackFor(name, false))
		if f, ok := w.schema.FieldsByName(name); p.delta && ok {
			opts = append(opts, parquet.WithEncodingFor(name, deltaEncoding(f[0].Type.ID())))
		}
		if p.delta || p.noDict {
			opts = append(opts, parquet.WithDictionaryFor(name, false))
		}
	}
	return parquet.NewWriterProperties(opts...)
}

// arrowProps stores the Arrow schema in the file.
func arrowProps() pqarrow.ArrowWriterProperties {
	return pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(codecMem))
}

// Codecs returns the compression of each column by name, as chosen (see
// Auto), or nil before the first record with rows is written or the file
// committed. The map is the caller's.
func (w *Writer) Codecs() map[string]Compression {
	if w.plans == nil {
		return nil
	}
	codecs := make(map[string]Compression, len(w.plans))
	for name, p := range w.plans {
		codecs[name] = p.codec
	}
	return codecs
}

// Write appends the rows of rec, whose columns must have the writer's names
// and types (nullability and metadata may differ, but a column of a field
// that is not nullable must hold no nulls). rec is Retained until
// the row group its rows went to is written (see hold), so the caller may
// release it, and its memory be reused, as soon as Write returns.
func (w *Writer) Write(rec arrow.Record) error {
	if w.closed {
		return fmt.Errorf("%w: %s", ErrClosed, w.path)
	}
	if !rec.Schema().Equal(w.schema) {
		if err := table.CheckSchema(w.schema, rec.Schema()); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSchemaMismatch, w.path, err)
		}
		rec = array.NewRecord(w.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	if err := noNullsInRequired(w.schema, rec); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
	}
	if !w.started() && rec.NumRows() == 0 {
		return nil
	}
	if !w.started() {
		if err := w.start(rec); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
		}
	}
	if w.flat != nil {
		if err := w.flat.write(rec); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
		}
		w.rows += rec.NumRows()
		return nil
	}
	if err := w.fw.WriteBuffered(rec); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
	}
	w.hold(rec)
	w.rows += rec.NumRows()
	return nil
}

// noNullsInRequired fails if a column of rec whose field in schema is not
// nullable holds nulls: a Parquet column of such a field has no place for
// them, and Arrow's writer would write whatever its value slots hold.
func noNullsInRequired(schema *arrow.Schema, rec arrow.Record) error {
	for i, f := range schema.Fields() {
		if n := rec.Column(i).NullN(); n > 0 && !f.Nullable {
			return fmt.Errorf("column %s is not nullable but holds %d nulls", f.Name, n)
		}
	}
	return nil
}

// hold retains rec, just written, until the row group that holds its last
// rows is closed, and releases the records of the row groups its write
// closed. Until a row group is closed, the Parquet writer's statistics keep
// the least and greatest values of its string and binary columns as slices
// of the records written (they are copied when the group is closed), so a
// record released earlier could have its memory reused under them (as a
// pooled Flight reader's records do, see flightproto.NewPooledReader).
// WriteBuffered fills the open group up to RowGroupRows and starts a new
// one for each further RowGroupRows rows of rec.
func (w *Writer) hold(rec arrow.Record) {
	total, limit := w.groupRows+rec.NumRows(), w.cfg.RowGroupRows
	if total > limit {
		w.releaseHeld()
		total = (total-limit-1)%limit + 1
	}
	rec.Retain()
	w.held, w.groupRows = append(w.held, rec), total
}

// releaseHeld releases every held record.
func (w *Writer) releaseHeld() {
	for _, r := range w.held {
		r.Release()
	}
	w.held = nil
}

// Rows is the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Size is the size of the file in bytes once committed (0 before).
func (w *Writer) Size() int64 { return w.size }

// Commit writes the footer, syncs the file and renames it to its path
// (replacing any file there). After an error the temporary file is removed
// and nothing appears at the path.
func (w *Writer) Commit() error {
	if w.closed {
		return fmt.Errorf("%w: %s", ErrClosed, w.path)
	}
	w.closed = true
	if err := w.finish(); err != nil {
		w.removeTemp()
		return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
	}
	if err := os.Rename(w.tmp.Name(), w.path); err != nil {
		w.removeTemp()
		return fmt.Errorf("%w: %s: %w", ErrWrite, w.path, err)
	}
	if w.cfg.DeferSync {
		return nil
	}
	return syncDir(filepath.Dir(w.path))
}

// finish closes the Parquet writer and makes the temporary file durable
// (under DeferSync, starts its write-back).
func (w *Writer) finish() error {
	var err error
	if !w.started() {
		err = w.start(nil)
	}
	switch {
	case err != nil:
	case w.flat != nil:
		err = w.flat.close()
		w.flat.abort()
	default:
		err = w.fw.Close()
	}
	w.releaseHeld()
	if err == nil {
		err = w.buf.Flush()
	}
	w.putBuf()
	if err == nil {
		err = w.tmp.Chmod(0o644)
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = w.tmp.Stat(); err == nil {
			w.size = fi.Size()
		}
	}
	switch {
	case err != nil:
	case w.cfg.DeferSync:
		durable.StartWriteback(w.tmp)
	default:
		err = w.tmp.Sync()
	}
	return errors.Join(err, w.tmp.Close())
}

// Abort discards the file. It is idempotent and does nothing after Commit.
func (w *Writer) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.fw != nil {
		_ = w.fw.Close()
	}
	if w.flat != nil {
		w.flat.abort()
	}
	w.releaseHeld()
	w.putBuf()
	w.removeTemp()
	return nil
}

// removeTemp closes and deletes the temporary file.
func (w *Writer) removeTemp() {
	_ = w.tmp.Close()
	_ = os.Remove(w.tmp.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return nil
}

// WriteFile writes recs (none is fine: a file with the schema and no rows)
// to a Parquet file at path with DefaultWriteConfig, atomically. recs are
// not retained.
func WriteFile(path string, schema *arrow.Schema, recs []arrow.Record) error {
	w, err := Create(path, schema, WriteConfig{})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Commit()
}
