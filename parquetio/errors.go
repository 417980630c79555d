package parquetio

import "errors"

// Sentinel errors of package parquetio. Errors wrap one of these with %w and
// name the file (and the column) concerned; match them with errors.Is.
var (
	// ErrNoFiles means a pattern matched no file.
	ErrNoFiles = errors.New("parquetio: no input files")
	// ErrSchemaMismatch means an input file's schema differs from the first
	// file's, or a record's schema differs from a writer's.
	ErrSchemaMismatch = errors.New("parquetio: schema mismatch")
	// ErrUnsupportedType means a column has a type the shuffle cannot route
	// or move (it also wraps table.ErrUnsupportedType).
	ErrUnsupportedType = errors.New("parquetio: unsupported column type")
	// ErrRead means a file could not be opened or decoded as Parquet.
	ErrRead = errors.New("parquetio: cannot read Parquet file")
	// ErrWrite means an output file could not be written.
	ErrWrite = errors.New("parquetio: cannot write Parquet file")
	// ErrClosed means a Writer was used after Commit or Abort.
	ErrClosed = errors.New("parquetio: writer closed")
)
