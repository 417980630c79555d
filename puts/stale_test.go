package puts

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// TestStaleOr: an error caused by an epoch move (a peer's stale-epoch
// refusal, the splitter's forgotten queues) becomes ErrStaleEpoch, so the
// client runs a new attempt; any other keeps its sentinel and does not.
func TestStaleOr(t *testing.T) {
	refused := func(code wire.RefusalCode, sentinel error) error {
		return fmt.Errorf("%w: shuffle s1: node n1: %w", sentinel, &wire.Refusal{Code: code, Reason: "why"})
	}
	for _, tc := range []struct {
		name      string
		err       error
		want, not error
	}{
		{"stale refusal", refused(wire.RefuseStaleEpoch, shuffle.ErrStaleEpoch), ErrStaleEpoch, shuffle.ErrFailed},
		{"stale refusal without its sentinel", refused(wire.RefuseStaleEpoch, errors.New("peer")), ErrStaleEpoch, shuffle.ErrFailed},
		{"forgotten queues", fmt.Errorf("send: %w", splitter.ErrForgotten), ErrStaleEpoch, shuffle.ErrFailed},
		{"failed refusal", refused(wire.RefuseFailed, shuffle.ErrFailed), shuffle.ErrFailed, ErrStaleEpoch},
		{"sealed refusal", refused(wire.RefuseSealed, shuffle.ErrSealed), shuffle.ErrSealed, ErrStaleEpoch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := staleOr(tc.err)
			if !errors.Is(err, tc.want) || errors.Is(err, tc.not) {
				t.Fatalf("staleOr(%v) = %v: want %v and not %v", tc.err, err, tc.want, tc.not)
			}
		})
	}
}
