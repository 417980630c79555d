package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// lossCase is one run of TestSimNodeLoss.
type lossCase struct {
	name   string
	budget int64
	leave  bool
	after  bool // lose the node after the seal, before reading
	seed   uint64
}

var lossCases = []lossCase{
	{name: "kill during puts"},
	{name: "kill during puts spilling", budget: tinyBudget},
	{name: "leave during puts", leave: true},
	{name: "kill after the seal", after: true},
}

// TestSimNodeLoss: a non-coordinator node is lost while tasks are being
// put, or after the barrier sealed. The barrier hands back the tasks to
// replay, they run again with new attempts on the survivors, and every row
// is read exactly once, in (task, order) order.
func TestSimNodeLoss(t *testing.T) {
	t.Parallel()
	for _, tc := range lossCases {
		for _, seed := range []uint64{1, 2} {
			tc := tc
			tc.seed = seed
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				t.Parallel()
				runLoss(t, tc, func(*simCluster) {})
			})
		}
	}
}

// runLoss runs one loss case on 4 nodes with 1 ms of jitter; adjust sets
// the driver's options.
func runLoss(t *testing.T, tc lossCase, adjust func(*simCluster)) {
	f := newFrame("loss", 16, 13, 16_000, 11)
	want := f.expect(t)
	c := startSim(t, 4, service.Config{MemoryLimit: tc.budget},
		simnet.Config{Rand: rand.New(rand.NewPCG(tc.seed, 0)), MaxDelay: time.Millisecond})
	adjust(c)
	ctx := testCtx(t)
	lose := func() { c.lose(2, tc.leave) }
	in := f.input()
	if !tc.after {
		in = loseAt(in, 5, lose)
	}
	b := c.run(ctx, f.spec(), in)
	if tc.after {
		lose()
		b = c.settleEpoch(ctx, t, f, in, 1)
	}
	if b.Epoch != 1 {
		t.Errorf("epoch %d after losing one node, want 1", b.Epoch)
	}
	c.awaitOwnersLive(t, f.id)
	if d := want.diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// TestSimStaleEpochPutError: a put on a live node that an epoch change
// interrupts must fail with ErrStaleEpoch (or ErrUnavailable), so that
// any client knows to run the task again.
func TestSimStaleEpochPutError(t *testing.T) { synctest.Test(t, testSimStaleEpochPutError) }

func testSimStaleEpochPutError(t *testing.T) {
	runLoss(t, lossCase{name: "kill during puts", seed: 1}, func(c *simCluster) { c.strict = true })
}

// TestSimReplayRacesReopen: the barrier's replay set may be put at once.
func TestSimReplayRacesReopen(t *testing.T) { synctest.Test(t, testSimReplayRacesReopen) }

func testSimReplayRacesReopen(t *testing.T) {
	runLoss(t, lossCase{name: "kill after the seal", after: true, seed: 2}, func(c *simCluster) { c.eager = true })
}

// loseAt wraps in so that lose runs when the input of the n-th task put
// (counting every attempt) is produced: while other puts are in flight.
func loseAt(in input, n int64, lose func()) input {
	var count atomic.Int64
	var once sync.Once
	recs := in.recs
	in.recs = func(task int) []arrow.Record {
		if count.Add(1) == n {
			once.Do(lose)
		}
		return recs(task)
	}
	return in
}

// lose kills node i, or makes it leave.
func (c *simCluster) lose(i int, leave bool) {
	if !leave {
		c.kill(i)
		return
	}
	c.mu.Lock()
	c.dead[i] = true
	c.mu.Unlock()
	if err := c.net.Leave(fmt.Sprintf("node-%d", i)); err != nil {
		c.t.Error(err)
	}
	go c.svcs[i].Close()
}

// settleEpoch waits at the barrier until the shuffle is sealed in epoch,
// replaying what it hands back.
func (c *simCluster) settleEpoch(ctx context.Context, t *testing.T, f frame, in input, epoch uint64) service.BarrierResult {
	for ctx.Err() == nil {
		b := c.settle(ctx, f.spec(), in, nil)
		if b.Epoch >= epoch {
			return b
		}
		time.Sleep(5 * time.Millisecond) // the coordinator has not seen the loss yet
	}
	t.Fatalf("shuffle %s never reached epoch %d", f.id, epoch)
	return service.BarrierResult{}
}

// awaitOwnersLive waits until no live node places a partition of id on a
// dead node: every survivor has applied the new epoch.
func (c *simCluster) awaitOwnersLive(t *testing.T, id string) {
	deadline := time.Now().Add(5 * time.Second)
	for i := range c.svcs {
		for c.alive(i) && c.placesOnDead(t, i, id) {
			if time.Now().After(deadline) {
				t.Fatalf("node-%d still places partitions of %s on a lost node", i, id)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func (c *simCluster) placesOnDead(t *testing.T, i int, id string) bool {
	locs, err := c.svcs[i].Locations(id)
	if err != nil {
		t.Fatalf("locations on node-%d: %v", i, err)
	}
	return slices.ContainsFunc(locs, func(l service.Location) bool { return !c.alive(c.index[l.Node]) })
}
