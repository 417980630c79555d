package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimIdleExpiryOnClock: idle expiry runs on Config.Clock. Of two
// shuffles, the one nobody uses is closed on every node once IdleExpiry
// passed on that clock, and not before; the one whose barrier is asked
// about on every node stays open. The cluster runs in a synctest bubble
// (synctest.Wait: every node has acted on the clock's move).
func TestSimIdleExpiryOnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
		c := startSim(t, 3, service.Config{IdleExpiry: time.Hour, Clock: f}, simnet.Config{})
		idle, busy := newFrame("idle", 4, 4, 100, 1), newFrame("busy", 4, 4, 100, 2)
		for _, fr := range []frame{idle, busy} {
			if err := c.svcs[0].Create(testCtx(t), fr.spec()); err != nil {
				t.Fatal(err)
			}
		}
		touch := func() {
			for _, svc := range c.svcs {
				ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				_, _ = svc.Barrier(ctx, busy.id) // asking touches it; nothing seals it
				cancel()
			}
		}
		for _, step := range []struct {
			advance time.Duration
			expired bool
		}{
			// The expiry check ticks every minute; the tick at IdleExpiry
			// exactly does not expire it, the next one does.
			{45 * time.Minute, false}, {15 * time.Minute, false}, {time.Minute, true},
		} {
			touch()
			f.Advance(step.advance)
			synctest.Wait()
			for i, svc := range c.svcs {
				_, err := svc.Info(idle.id)
				// A member may drop it before its own tick once a recheck finds
				// that its coordinator expired it: gone as well.
				gone := err != nil && (strings.Contains(err.Error(), "expired") || errors.Is(err, service.ErrLeft))
				if gone != step.expired {
					t.Fatalf("node-%d after %v more: idle shuffle: %v; want expired %v", i, step.advance, err, step.expired)
				}
				if _, err := svc.Info(busy.id); err != nil {
					t.Fatalf("node-%d after %v more: busy shuffle: %v; want open", i, step.advance, err)
				}
			}
		}
	})
}
