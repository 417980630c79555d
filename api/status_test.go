package api

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/service"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestToStatusStaleBeforeFailed checks that an error marked stale is
// Unavailable (the client runs a new attempt) even when its cause also
// reads as a failed shuffle, and that a failed shuffle alone is Aborted.
func TestToStatusStaleBeforeFailed(t *testing.T) {
	both := fmt.Errorf("%w: %w", service.ErrStaleEpoch, fmt.Errorf("%w: node n3 refused", service.ErrFailed))
	if got := status.Code(toStatus(both)); got != codes.Unavailable {
		t.Fatalf("stale and failed: %s, want Unavailable", got)
	}
	if got := status.Code(toStatus(errors.Join(service.ErrFailed))); got != codes.Aborted {
		t.Fatalf("failed: %s, want Aborted", got)
	}
}
