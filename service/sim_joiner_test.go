package service_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimJoinerTakesPuts: node-4 joins after a shuffle of nodes 0-3 was
// created and half its tasks were put. It takes a put of the shuffle as a
// guest (a sender only: it owns no partition). Then a member (or the
// coordinator) is lost: the epoch moves without node-4 hearing of it, so
// its next put fails as stale (or finds the coordinator gone), it reads
// the new epoch and coordinator from the record, and its later puts (new
// attempts) run in that epoch. The barrier's replays run on any node,
// node-4 included; the shuffle seals and every row is read once. A
// barrier or locations asked of node-4 are answered as by a node that
// does not hold the shuffle.
func TestSimJoinerTakesPuts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lose int
	}{
		{name: "a member lost", lose: 2},
		{name: "the coordinator lost", lose: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			joinerPuts(t, fmt.Sprintf("joiner-%d", tc.lose), tc.lose)
		})
	}
}

// joinerPuts runs TestSimJoinerTakesPuts losing node lose.
func joinerPuts(t *testing.T, id string, lose int) {
	f := newFrame(id, 16, 13, 16_000, 21)
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
	c.lose(lose, false)
	if err := c.awaitEpochOn(c.liveNode(0), f.id); err != nil {
		t.Fatal(err)
	}
	c.awaitRecord(t, f.id, func(r *record.Record) bool { return r.Epoch >= 1 })
	refused := false
	for task := uint64(9); task < 16; task++ {
		for {
			_, err := c.putOnce(ctx, 4, sp, in, task, c.nextAttempt(f.id, task))
			if err == nil {
				break
			}
			if !errors.Is(err, service.ErrStaleEpoch) && !errors.Is(err, service.ErrUnavailable) || refused {
				t.Fatalf("put task %d on node-4: %v", task, err)
			}
			refused = true
		}
	}
	if !refused {
		t.Error("node-4's first put after the epoch moved was not refused")
	}
	b := c.settle(ctx, sp, in, nil)
	if b.Epoch != 1 {
		t.Errorf("sealed in epoch %d, want 1", b.Epoch)
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	if _, err := c.svcs[4].Barrier(ctx, f.id); !errors.Is(err, service.ErrUnavailable) {
		t.Errorf("barrier asked of the guest: %v, want ErrUnavailable (ask another node)", err)
	}
	if _, err := c.svcs[4].Locations(f.id); !errors.Is(err, service.ErrUnknownShuffle) {
		t.Errorf("locations asked of the guest: %v, want ErrUnknownShuffle", err)
	}
}
