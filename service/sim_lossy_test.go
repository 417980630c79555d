package service_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// TestSimLossyControl: once the shuffle exists, any frame (control frames
// too: begin, done, committed, barrier, seal) may be lost before or after
// its handler ran, 5% each. Puts that fail are run again; the result is
// still exactly once.
func TestSimLossyControl(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			runLossy(t, seed, 0.05, service.Config{})
		})
	}
}

// TestSimLossyControlHeavy is TestSimLossyControl with 20% of requests
// and 20% of replies lost.
func TestSimLossyControlHeavy(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			runLossy(t, seed, 0.2, service.Config{LossWait: 200 * time.Millisecond})
		})
	}
}

// runLossy shuffles on 3 nodes whose frames are lost with probability p
// (requests and replies) once the shuffle is created.
func runLossy(t *testing.T, seed uint64, p float64, cfg service.Config) {
	f := newFrame("lossy", 8, 7, 4_000, 13)
	var on atomic.Bool
	c := startSim(t, 3, cfg, simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)),
		MaxDelay: time.Millisecond, DropRequest: p, DropReply: p,
		Faulty: func(string, string, wire.Type) bool { return on.Load() }})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	c.settle(ctx, f.spec(), f.input(), []uint64{0, 1, 2, 3, 4, 5, 6, 7})
	on.Store(false)
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}
