package dap

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of the package wraps one, naming the
// process, the axis and the key it concerns. Match them with errors.Is.
var (
	// ErrDecode means the JSON does not parse or has the wrong shape.
	ErrDecode = errors.New("dap: malformed dim_data")
	// ErrVersion means __version__ is missing or not a 0.x.y or 1.x.y version.
	ErrVersion = errors.New("dap: unsupported __version__")
	// ErrMissingKey means a key that the dist_type requires is absent.
	ErrMissingKey = errors.New("dap: missing key")
	// ErrUnknownKey means a key the protocol does not define is present.
	ErrUnknownKey = errors.New("dap: unknown key")
	// ErrBadValue means a key has a value out of its range.
	ErrBadValue = errors.New("dap: bad value")
	// ErrGrid means proc_grid_size and proc_grid_rank do not describe the
	// processes: their product is not the process count, or a process's
	// ranks are not its C-order grid coordinates.
	ErrGrid = errors.New("dap: process grid does not match the processes")
	// ErrInconsistent means two processes on one grid rank of an axis, or
	// two ranks of one axis, disagree on a key that must be equal.
	ErrInconsistent = errors.New("dap: dimension dictionaries disagree")
	// ErrOverlap means a global index is owned by two processes.
	ErrOverlap = errors.New("dap: index owned twice")
	// ErrMissing means a global index is owned by no process.
	ErrMissing = errors.New("dap: index owned by no process")
	// ErrPadding means a padding is wider than the neighbour's owned range
	// or differs from the neighbour's matching padding.
	ErrPadding = errors.New("dap: bad padding")
	// ErrDuplicate means an 'u' indices buffer repeats an index.
	ErrDuplicate = errors.New("dap: indices not unique")
	// ErrSize means sizes do not add up: buffer shape against start/stop or
	// the owned count, or size against the indices owned.
	ErrSize = errors.New("dap: sizes do not add up")
)

// keyErr is an error about one key of one axis of one process.
func keyErr(proc, axis int, key string, sentinel error, format string, args ...any) error {
	return fmt.Errorf("process %d, axis %d, key %q: %s: %w", proc, axis, key, fmt.Sprintf(format, args...), sentinel)
}
