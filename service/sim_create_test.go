package service_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimCreateRace: two nodes take creates of the same ID at once. A member
// that already holds the other's shuffle refuses (ErrExists), and the
// loser undoes only its own installs: a create that succeeded is whole on
// every member (same creator everywhere) and runs to the end; where both
// lost, no member holds the ID.
func TestSimCreateRace(t *testing.T) {
	t.Parallel()
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	for round := range 12 {
		id := fmt.Sprintf("race-%d", round)
		f := newFrame(id, 4, 3, 50, uint64(round+1))
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { errs[i] = c.svcs[i].Create(ctx, f.spec()) })
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil:
				won = i
			case !errors.Is(err, service.ErrExists):
				t.Fatalf("%s: create on node %d: %v, want nil or ErrExists", id, i, err)
			}
		}
		if errs[0] == nil && errs[1] == nil {
			t.Fatalf("%s: both creates succeeded", id)
		}
		checkHeld(t, c, id, won)
		if won >= 0 {
			c.settle(ctx, f.spec(), f.input(), []uint64{0, 1, 2, 3})
			if err := c.svcs[won].CloseShuffle(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkHeld checks that every member holds id, created by node won, or that
// none holds it (won < 0).
func checkHeld(t *testing.T, c *simCluster, id string, won int) {
	t.Helper()
	for _, s := range c.svcs {
		info, err := s.Info(id)
		switch {
		case won < 0 && err == nil:
			t.Fatalf("%s: both creates failed, but node %s holds it", id, s.Name())
		case won >= 0 && err != nil:
			t.Fatalf("%s: node %d's create succeeded, but node %s lost it: %v", id, won, s.Name(), err)
		case won >= 0 && info.Coordinator != c.svcs[won].Name():
			t.Fatalf("%s: node %s holds the create of %s, want %s", id, s.Name(), info.Coordinator, c.svcs[won].Name())
		}
	}
}
