package service

import (
	"errors"
	"strings"
)

// decided is the failure a coordinator's fail decision names: its reason
// crosses the network as text, so the sentinel it wrapped there is found
// again by its message (see failure).
type decided struct {
	reason string
	is     error
}

func (d *decided) Error() string { return d.reason }
func (d *decided) Unwrap() error { return d.is }

// failure is the error of a fail decision with reason: it wraps
// ErrReplayDiffers when the coordinator failed the shuffle because a replay
// differed, so that this node's answers (a put, a barrier poll) say so to
// the client too, as the coordinator's do.
func failure(reason string) error {
	if strings.Contains(reason, ErrReplayDiffers.Error()) {
		return &decided{reason: reason, is: ErrReplayDiffers}
	}
	return errors.New(reason)
}
