package coordinator

import (
	"errors"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
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

// FailureOf is the error of fail decision c (control.OpFail), as a member
// that takes it holds it: it wraps shuffle.ErrReplayDiffers when the
// coordinator failed the shuffle because a replay differed, so that the
// member's answers (a put, a barrier poll) say so to the client too, as
// the coordinator's do.
func FailureOf(c *control.Msg) error {
	if c.Differs != "" {
		return &decided{reason: c.Reason, is: shuffle.ErrReplayDiffers}
	}
	return errors.New(c.Reason)
}
