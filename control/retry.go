package control

import (
	"context"
	"errors"
	"time"

	"github.com/shufflenode/shufflenode/wire"
)

// Retry calls fn (one control request) until it succeeds, fails with a
// refusal (wire.ErrRefused: the peer meant it), ctx ends or tries run out,
// backing off from 20 ms. It returns fn's last error.
func Retry(ctx context.Context, tries int, fn func() error) error {
	left := tries
	return RetryWhile(ctx, func() bool { left--; return left > 0 }, fn)
}

// RetryWhile is Retry for as long as more, asked after each failed call,
// says so: for a peer that should answer as long as some condition holds
// (it is still a member, say), however many requests a lossy network drops.
// The back-off doubles from 20 ms up to 1.28 s.
func RetryWhile(ctx context.Context, more func() bool, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		if err == nil || errors.Is(err, wire.ErrRefused) || ctx.Err() != nil || !more() {
			return err
		}
		select {
		case <-time.After(backoff(i)):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// backoff is the wait after the i-th failed try (from 0): 20 ms doubling up
// to 1.28 s.
func backoff(i int) time.Duration { return time.Duration(20<<min(i, 6)) * time.Millisecond }
