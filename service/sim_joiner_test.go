package service_test

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimJoinerTakesPuts: node-4 joins after a shuffle of nodes 0-3 was
// created and half its tasks were put. It takes a put of the shuffle as a
// guest (a sender only: it owns no partition). Then node-2 is lost: the
// epoch moves without node-4 hearing of it, so its next put fails as stale,
// it reads the new epoch from the record, and its later puts (new
// attempts) run in that epoch. The barrier's replays run on any node,
// node-4 included; the shuffle seals and every row is read once.
func TestSimJoinerTakesPuts(t *testing.T) {
	t.Parallel()
	f := newFrame("joiner", 16, 13, 16_000, 21)
	cfg := service.Config{Logger: simLogger()}
	c := startSim(t, 4, cfg, simnet.Config{Rand: rand.New(rand.NewPCG(21, 0)), MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	sp, in := f.spec(), f.input()
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	c.putAll(ctx, sp, in, []uint64{0, 1, 2, 3, 4, 5, 6, 7})
	c.awaitRecord(t, f.id, func(*record.Record) bool { return true })
	c.add(4, cfg)
	if _, err := c.putOnce(ctx, 4, sp, in, 8, c.nextAttempt(f.id, 8)); err != nil {
		t.Fatalf("put task 8 on node-4, which joined after the create: %v", err)
	}
	c.lose(2, false)
	if err := c.awaitEpochOn(0, f.id); err != nil {
		t.Fatal(err)
	}
	c.awaitRecord(t, f.id, func(r *record.Record) bool { return r.Epoch >= 1 })
	stale := false
	for task := uint64(9); task < 16; task++ {
		for {
			_, err := c.putOnce(ctx, 4, sp, in, task, c.nextAttempt(f.id, task))
			if err == nil {
				break
			}
			if !errors.Is(err, service.ErrStaleEpoch) || stale {
				t.Fatalf("put task %d on node-4: %v", task, err)
			}
			stale = true
		}
	}
	if !stale {
		t.Error("node-4's first put after the epoch moved was not refused as stale")
	}
	b := c.settle(ctx, sp, in, nil)
	if b.Epoch != 1 {
		t.Errorf("sealed in epoch %d, want 1", b.Epoch)
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}
