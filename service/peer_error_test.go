package service

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/wire"
)

// TestPeerErrorRefusals checks that a peer's refusal becomes the sentinel a
// caller acts on: a stale epoch is ErrStaleEpoch (run a new attempt), never
// ErrFailed (give up).
func TestPeerErrorRefusals(t *testing.T) {
	cases := []struct {
		code      wire.RefusalCode
		want, not error
	}{
		{wire.RefuseStaleEpoch, ErrStaleEpoch, ErrFailed},
		{wire.RefuseUnknownShuffle, ErrUnknownShuffle, ErrFailed},
		{wire.RefuseSealed, ErrSealed, ErrFailed},
		{wire.RefuseNotOwner, ErrNotOwner, ErrFailed},
		{wire.RefuseClosing, ErrUnavailable, ErrFailed},
		{wire.RefuseFailed, ErrFailed, ErrStaleEpoch},
	}
	for _, c := range cases {
		refused := fmt.Errorf("dht: request control to node n1: %w", &wire.Refusal{Code: c.code, Reason: "why"})
		if err := peerError("s1", "n1", refused); !errors.Is(err, c.want) || errors.Is(err, c.not) {
			t.Errorf("refusal %s: %v: want %v and not %v", c.code, err, c.want, c.not)
		}
	}
}
