package refusal

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/puts"
	"github.com/shufflenode/shufflenode/shuffle"
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
		{wire.RefuseStaleEpoch, shuffle.ErrStaleEpoch, shuffle.ErrFailed},
		{wire.RefuseUnknownShuffle, shuffle.ErrUnknownShuffle, shuffle.ErrFailed},
		{wire.RefuseSealed, shuffle.ErrSealed, shuffle.ErrFailed},
		{wire.RefuseNotOwner, shuffle.ErrNotOwner, shuffle.ErrFailed},
		{wire.RefuseClosing, shuffle.ErrUnavailable, shuffle.ErrFailed},
		{wire.RefuseFailed, shuffle.ErrFailed, shuffle.ErrStaleEpoch},
		{shuffle.RefuseLeft, shuffle.ErrLeft, shuffle.ErrFailed},
		{shuffle.RefuseReplayDiffers, shuffle.ErrReplayDiffers, shuffle.ErrUnavailable},
	}
	for _, c := range cases {
		refused := fmt.Errorf("dht: request control to node n1: %w", &wire.Refusal{Code: c.code, Reason: "why"})
		if err := PeerError("s1", "n1", refused); !errors.Is(err, c.want) || errors.Is(err, c.not) {
			t.Errorf("refusal %s: %v: want %v and not %v", c.code, err, c.want, c.not)
		}
	}
}

// TestPeerErrorUnreachable checks that a request that got no refusal is
// ErrUnavailable, and a busy reply is not.
func TestPeerErrorUnreachable(t *testing.T) {
	if err := PeerError("s1", "n1", errors.New("dial: refused")); !errors.Is(err, shuffle.ErrUnavailable) {
		t.Errorf("unreachable peer: %v: want ErrUnavailable", err)
	}
	busy := fmt.Errorf("dht: %w", wire.ErrBusy)
	if err := PeerError("s1", "n1", busy); errors.Is(err, shuffle.ErrUnavailable) || !errors.Is(err, wire.ErrBusy) {
		t.Errorf("busy peer: %v: want ErrBusy and not ErrUnavailable", err)
	}
}

// TestCodeRoundTrip checks that a node's error, refused with Code, comes
// back to the sender (Sentinel) as the same sentinel.
func TestCodeRoundTrip(t *testing.T) {
	for _, err := range []error{shuffle.ErrUnknownShuffle, shuffle.ErrSealed, shuffle.ErrNotOwner, shuffle.ErrNotSealed,
		shuffle.ErrExists, shuffle.ErrBadInput, shuffle.ErrLeft, shuffle.ErrReplayDiffers, shuffle.ErrFailed} {
		wrapped := fmt.Errorf("shuffle s1 on node n1: %w", err)
		if back := Sentinel(Code(wrapped)); !errors.Is(back, err) {
			t.Errorf("%v: code %s comes back as %v", err, Code(wrapped), back)
		}
	}
	for _, err := range []error{puts.ErrConflict, limits.ErrLimit} {
		if c := Code(fmt.Errorf("s1: %w", err)); c != wire.RefuseBadRequest {
			t.Errorf("%v: code %s, want %s", err, c, wire.RefuseBadRequest)
		}
	}
	own := &shuffle.Refusal{Code: wire.RefuseStaleEpoch, Err: errors.New("epoch 2")}
	if c := Code(fmt.Errorf("s1: %w", own)); c != wire.RefuseStaleEpoch {
		t.Errorf("a refusal's own code: got %s", c)
	}
}
