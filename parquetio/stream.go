package parquetio

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Reader reads a Parquet file's rows one record batch at a time, so that
// a caller that passes each batch on holds one batch of the file at once
// (ReadFile holds them all).
type Reader struct {
	ctx   context.Context
	path  string
	rr    recordReader
	close func()
	rows  int64
}

// Open opens the file at path for reading in batches of at most batchRows
// rows (DefaultBatchRows when 0) allocated from mem (memory.DefaultAllocator
// when nil). ctx is checked between batches. Close it when done.
func Open(ctx context.Context, path string, mem memory.Allocator, batchRows int64) (*Reader, error) {
	return open(ctx, path, mem, batchRows)
}

// open is Open of the columns named (none: every column).
func open(ctx context.Context, path string, mem memory.Allocator, batchRows int64, names ...string) (r *Reader, err error) {
	defer recoverRead(path, &err)
	rr, closeFile, rows, err := openRecords(ctx, path, mem, batchRows, names...)
	if err != nil {
		return nil, err
	}
	return &Reader{ctx: ctx, path: path, rr: rr, close: closeFile, rows: rows}, nil
}

// Schema is the file's Arrow schema.
func (r *Reader) Schema() *arrow.Schema { return r.rr.Schema() }

// Rows is the file's row count, from its footer.
func (r *Reader) Rows() int64 { return r.rows }

// Next returns the next batch, valid until the next call or Close, or
// io.EOF after the last; a malformed file gives an error wrapping ErrRead
// that names it.
func (r *Reader) Next() (rec arrow.Record, err error) {
	defer recoverRead(r.path, &err)
	if err := r.ctx.Err(); err != nil {
		return nil, err
	}
	if r.rr.Next() {
		return r.rr.Record(), nil
	}
	if err := r.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %s: %w", ErrRead, r.path, err)
	}
	return nil, io.EOF
}

// Close releases the reader and closes the file.
func (r *Reader) Close() { r.close() }
