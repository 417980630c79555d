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
	var err error
	for i := range tries {
		if err = fn(); err == nil || errors.Is(err, wire.ErrRefused) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(time.Duration(20<<min(i, 6)) * time.Millisecond):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
	return err
}
