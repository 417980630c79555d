package spill

import "errors"

// Sentinel errors. The store wraps them with %w and names the shuffle and node they concern;
// match them with errors.Is.
var (
	// ErrClosed is returned by every operation after Close.
	ErrClosed = errors.New("spill: store closed")
	// ErrDuplicate is returned by Put when the key is already stored for the shuffle. The
	// store did not take the value.
	ErrDuplicate = errors.New("spill: duplicate piece")
	// ErrMemoryFull is returned by Put on a memory-only store (no Dir, no Disk) when the piece
	// does not fit in the memory budget. The store did not take the value.
	ErrMemoryFull = errors.New("spill: memory budget full")
	// ErrDisk wraps a failure of the disk under the store (write, scan or drop). The underlying
	// error (for example syscall.ENOSPC) is wrapped too.
	ErrDisk = errors.New("spill: disk error")
	// ErrMarshal wraps an error returned by Value.MarshalSpill.
	ErrMarshal = errors.New("spill: marshalling a value")
	// ErrInvalid is returned for a bad argument: nil value, negative size, empty or overlong
	// shuffle ID.
	ErrInvalid = errors.New("spill: invalid argument")
	// ErrConfig is returned by Config.Validate and Open for a bad configuration.
	ErrConfig = errors.New("spill: invalid config")
	// ErrBadKey is returned when a key read from disk does not decode.
	ErrBadKey = errors.New("spill: malformed disk key")
	// ErrBadValue is returned when a group of spilled pieces read from disk does not decode.
	ErrBadValue = errors.New("spill: malformed disk value")
)
