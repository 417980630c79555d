package dedup

import "errors"

// Sentinel errors, wrapped with %w and the task, attempt and partition they
// concern; match them with errors.Is. The Ledger does not know the shuffle
// ID: its caller adds it when it wraps these.
var (
	// ErrTaskRange means a task ID is not in 0..tasks-1.
	ErrTaskRange = errors.New("dedup: task out of range")
	// ErrPartitionRange means a partition is not in 0..partitions-1.
	ErrPartitionRange = errors.New("dedup: partition out of range")
)

// ErrNotCommitted means an attempt that must have committed (see
// Ledger.Supersede) did not.
var ErrNotCommitted = errors.New("dedup: attempt not committed")
