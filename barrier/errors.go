package barrier

import "errors"

// Sentinel errors. Every error returned by this package wraps one of these
// with %w and names the shuffle, and where it applies the task, attempt and
// receiver; match them with errors.Is.
var (
	// ErrInvalidConfig means Config.Validate rejected the configuration.
	ErrInvalidConfig = errors.New("barrier: invalid config")
	// ErrTaskRange means a task ID is not in 0..Tasks-1.
	ErrTaskRange = errors.New("barrier: task out of range")
	// ErrUnknownReceiver means a node is not a receiver of the shuffle (in
	// any epoch for Committed, in the current epoch for TaskDone).
	ErrUnknownReceiver = errors.New("barrier: unknown receiver")
	// ErrSealed means a report arrived after the barrier was reached.
	ErrSealed = errors.New("barrier: shuffle sealed")
	// ErrFailed means a report arrived after the shuffle failed; the error
	// also wraps the cause of the failure.
	ErrFailed = errors.New("barrier: shuffle failed")
	// ErrMismatch means what a receiver holds differs from what the sender
	// reported, or two reports of the same event disagree. It fails the
	// shuffle.
	ErrMismatch = errors.New("barrier: totals mismatch")
	// ErrStaleEpoch means SetReceivers was given an epoch not newer than the
	// current one.
	ErrStaleEpoch = errors.New("barrier: stale epoch")
)
