package coordinator

import (
	"fmt"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// replayDiffers fails sh if c is a commit whose receiver found that a
// replayed attempt produced other rows than the attempt that kept a
// partition (control.Msg.Differs): serving both would mix two versions of
// the task's input. It reports whether it did.
func (cd *Coordinator) replayDiffers(sh *Shuffle, c *control.Msg) bool {
	if c.Op != control.OpCommitted || c.Differs == "" {
		return false
	}
	err := fmt.Errorf("%w: %s", shuffle.ErrReplayDiffers, c.Differs)
	cd.decide(sh, sh.fail(err))
	return true
}
