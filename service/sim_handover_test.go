package service_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimHandOverCut: node 2 drains a one-copy shuffle after the seal and
// its handover is cut after the first new owner took its share: the node
// is killed (the coordinator sees it gone), or its drain's deadline
// passes (it tells the coordinator the copy failed). Either way the
// coordinator falls back to the loss path once: the tasks whose data node
// 2 held run again, the new owner that took its share keeps it and drops
// the replay's copy by ID, and every row is read exactly once.
func TestSimHandOverCut(t *testing.T) {
	t.Parallel()
	for _, kill := range []bool{true, false} {
		name := map[bool]string{true: "killed", false: "deadline"}[kill]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFrame("cut-"+name, 16, 13, 16_000, 11)
			want := f.expect(t)
			c := startSim(t, 4, service.Config{}, simnet.Config{Rand: rand.New(rand.NewPCG(2, 0)), MaxDelay: time.Millisecond})
			ctx := testCtx(t)
			sp := f.spec()
			if err := c.svcs[0].Create(ctx, sp); err != nil {
				t.Fatal(err)
			}
			in := f.input()
			c.settle(ctx, sp, in, allTasks(sp.Tasks))
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var once sync.Once
			c.svcs[2].SetHandOverCopied(func(string, string) {
				once.Do(func() {
					if kill {
						c.kill(2)
						return
					}
					cancel()
				})
			})
			res, err := c.svcs[2].Drain(dctx)
			if err != nil || res.HandedOver {
				t.Fatalf("drain: %+v, %v; want a fallback", res, err)
			}
			if !kill {
				c.lose(2, true)
			}
			b := c.settleEpochOf(ctx, t, sp.ID, func() service.BarrierResult { return c.settle(ctx, sp, in, nil) }, 1)
			if b.ReplaySet == 0 {
				t.Error("a cut handover replayed nothing: what node 2 held was not all copied")
			}
			c.awaitOwnersLive(t, f.id)
			if d := want.diff(c.collect(ctx, t, f)); d != "" {
				t.Fatal(d)
			}
		})
	}
}
