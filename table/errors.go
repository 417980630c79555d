package table

import "errors"

// Sentinel errors of package table. Errors returned by this package wrap one of
// these with %w and name the column, row or value concerned; match them with
// errors.Is.
var (
	// ErrBadRule means a partitioning rule is invalid for its schema: unknown
	// column, wrong number of columns, bad divisions or P < 1.
	ErrBadRule = errors.New("table: invalid partitioning rule")
	// ErrUnsupportedType means a column has a type this package cannot hash,
	// compare or split.
	ErrUnsupportedType = errors.New("table: unsupported column type")
	// ErrSchemaMismatch means a record's schema differs from the expected one.
	ErrSchemaMismatch = errors.New("table: schema mismatch")
	// ErrBadPartition means an explicit partition column holds a null or a
	// value outside [0, P).
	ErrBadPartition = errors.New("table: bad partition value")
	// ErrBadInput means arguments to Split or Partition are inconsistent
	// (length of pids, group indices out of range...).
	ErrBadInput = errors.New("table: bad input")
	// ErrCorrupt means bytes given to Decode or SchemaFromBytes are not a
	// valid Arrow IPC message of the expected kind.
	ErrCorrupt = errors.New("table: corrupt IPC bytes")
)
