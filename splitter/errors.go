package splitter

import (
	"errors"
	"time"
)

var (
	// ErrClosed is returned by calls on a closed Splitter.
	ErrClosed = errors.New("splitter: closed")
	// ErrForgotten completes the pending work of a shuffle that was forgotten.
	ErrForgotten = errors.New("splitter: shuffle forgotten")
	// ErrBadInput means a task's input cannot be cut: a record the
	// partitioner refuses, or a chunk the rechunk plan does not fit.
	ErrBadInput = errors.New("splitter: bad input")
	// ErrGaveUp wraps the last error of a send that ran out of retries.
	ErrGaveUp = errors.New("splitter: send failed after retries")
)

// RetryAfter is implemented by Sender errors that may be retried: the message
// certainly did not take effect, or resending it is harmless. Delay is how long
// to wait before the next try (0 means use the splitter's backoff).
type RetryAfter interface {
	error
	RetryAfter() time.Duration
}

// Retryable wraps err so that the splitter retries it after d.
func Retryable(err error, d time.Duration) error { return &retryErr{err: err, d: d} }

type retryErr struct {
	err error
	d   time.Duration
}

func (e *retryErr) Error() string             { return e.err.Error() }
func (e *retryErr) Unwrap() error             { return e.err }
func (e *retryErr) RetryAfter() time.Duration { return e.d }

// retryDelay reports whether err may be retried and after how long.
func retryDelay(err error) (time.Duration, bool) {
	var r RetryAfter
	if errors.As(err, &r) {
		return r.RetryAfter(), true
	}
	return 0, false
}
