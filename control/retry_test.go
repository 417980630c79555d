package control

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/wire"
)

// TestRetryCounts: Retry makes exactly tries calls of a failing fn, stops at
// the first success, and never retries a refusal.
func TestRetryCounts(t *testing.T) {
	ctx := context.Background()
	lost := errors.New("dropped")
	for _, tc := range []struct {
		name      string
		okAt      int // the call (from 1) that succeeds; 0: none
		refuse    bool
		wantCalls int
		wantErr   error
	}{
		{"always fails", 0, false, 3, lost},
		{"second succeeds", 2, false, 2, nil},
		{"refused", 0, true, 1, wire.ErrRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := Retry(ctx, 3, func() error {
				calls++
				switch {
				case tc.refuse:
					return fmt.Errorf("%w: no", wire.ErrRefused)
				case calls == tc.okAt:
					return nil
				}
				return lost
			})
			if calls != tc.wantCalls || !errors.Is(err, tc.wantErr) && (err != nil || tc.wantErr != nil) {
				t.Fatalf("%d calls, err %v; want %d calls, err %v", calls, err, tc.wantCalls, tc.wantErr)
			}
		})
	}
}

// TestRetryWhile: RetryWhile keeps calling while more holds, and stops at
// the first failed call after more turns false.
func TestRetryWhile(t *testing.T) {
	calls := 0
	err := RetryWhile(context.Background(), func() bool { return calls < 4 }, func() error {
		calls++
		return errors.New("dropped")
	})
	if err == nil || calls != 4 {
		t.Fatalf("%d calls, err %v; want 4 and an error", calls, err)
	}
}
