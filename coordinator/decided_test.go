package coordinator

import (
	"errors"
	"testing"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// TestFailureOf: a member takes the sentinel of a fail decision from its
// Differs field, never from its reason's text, and says the reason as
// the coordinator gave it.
func TestFailureOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       control.Msg
		differs bool
	}{
		{"replay differs", control.Msg{Op: control.OpFail, Reason: "task 3 differs", Differs: "task 3 differs"}, true},
		{"other failure", control.Msg{Op: control.OpFail, Reason: "node b: disk full"}, false},
		{"reason that only names the sentinel", control.Msg{Op: control.OpFail, Reason: shuffle.ErrReplayDiffers.Error()}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := FailureOf(&tc.c)
			if got := errors.Is(err, shuffle.ErrReplayDiffers); got != tc.differs || err.Error() != tc.c.Reason {
				t.Fatalf("FailureOf = %q (replay differs %v), want %q (%v)", err, got, tc.c.Reason, tc.differs)
			}
		})
	}
}
