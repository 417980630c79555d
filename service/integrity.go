package service

import (
	"errors"

	"github.com/shufflenode/shufflenode/control"
)

// decided is the failure a coordinator's fail decision names: its reason
// crosses the network as text, with the sentinel it wrapped there marked by
// a field of its own (control.Msg.Differs).
type decided struct {
	reason string
	is     error
}

func (d *decided) Error() string { return d.reason }
func (d *decided) Unwrap() error { return d.is }

// failure is the error of fail decision c: it wraps ErrReplayDiffers when
// the coordinator failed the shuffle because a replay differed, so that
// this node's answers (a put, a barrier poll) say so to the client too, as
// the coordinator's do.
func failure(c *control.Msg) error {
	if c.Differs != "" {
		return &decided{reason: c.Reason, is: ErrReplayDiffers}
	}
	return errors.New(c.Reason)
}
