package refusal

import (
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/puts"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// Code maps an error to the refusal code a sender acts on: a
// *shuffle.Refusal's own code, else the code of the sentinel err wraps,
// else wire.RefuseFailed.
func Code(err error) wire.RefusalCode {
	var r *shuffle.Refusal
	switch {
	case errors.As(err, &r):
		return r.Code
	case errors.Is(err, shuffle.ErrLeft):
		return shuffle.RefuseLeft
	case errors.Is(err, shuffle.ErrReplayDiffers):
		return shuffle.RefuseReplayDiffers
	case errors.Is(err, shuffle.ErrUnknownShuffle):
		return wire.RefuseUnknownShuffle
	case errors.Is(err, shuffle.ErrSealed):
		return wire.RefuseSealed
	case errors.Is(err, shuffle.ErrNotOwner):
		return wire.RefuseNotOwner
	case errors.Is(err, shuffle.ErrNotSealed):
		return wire.RefuseNotSealed
	case errors.Is(err, shuffle.ErrExists):
		return shuffle.RefuseExists
	case errors.Is(err, shuffle.ErrBadInput), errors.Is(err, puts.ErrConflict), errors.Is(err, limits.ErrLimit):
		return wire.RefuseBadRequest
	}
	return wire.RefuseFailed
}

// Sentinel is the inverse of Code: the error a refusal of code stands for.
func Sentinel(code wire.RefusalCode) error {
	switch code {
	case wire.RefuseUnknownShuffle:
		return shuffle.ErrUnknownShuffle
	case wire.RefuseStaleEpoch:
		return shuffle.ErrStaleEpoch
	case wire.RefuseSealed:
		return shuffle.ErrSealed
	case wire.RefuseBadRequest:
		return shuffle.ErrBadInput
	case wire.RefuseNotOwner:
		return shuffle.ErrNotOwner
	case wire.RefuseClosing:
		return shuffle.ErrUnavailable
	case wire.RefuseNotSealed:
		return shuffle.ErrNotSealed
	case shuffle.RefuseLeft:
		return fmt.Errorf("%w: %w", shuffle.ErrUnavailable, shuffle.ErrLeft)
	case shuffle.RefuseReplayDiffers:
		return fmt.Errorf("%w: %w", shuffle.ErrFailed, shuffle.ErrReplayDiffers)
	case shuffle.RefuseExists:
		return shuffle.ErrExists
	}
	return shuffle.ErrFailed
}

// PeerError wraps a failed request about shuffle id to node: a refusal
// becomes the sentinel of its code (Sentinel); a busy reply stays as it
// is; anything else is shuffle.ErrUnavailable.
func PeerError(id, node string, err error) error {
	if code, ok := wire.RefusalCodeOf(err); ok {
		return fmt.Errorf("%w: shuffle %s: node %s: %w", Sentinel(code), id, node, err)
	}
	if errors.Is(err, wire.ErrBusy) {
		return fmt.Errorf("service: shuffle %s: node %s: %w", id, node, err)
	}
	return fmt.Errorf("%w: shuffle %s: node %s: %w", shuffle.ErrUnavailable, id, node, err)
}
