package service_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spill"
)

// rejoinConfig checks held shuffles often, so the tests need not wait.
var rejoinConfig = service.Config{MemoryLimit: tinyBudget, Recheck: 200 * time.Millisecond}

// TestSimRejoinAfterClose: node-2 is cut off for longer than failure
// detection while tasks are put; the others declare it lost, replay its
// tasks, seal and read every row exactly once, and the client closes the
// shuffle, which the cut-off node cannot hear. Once back, it frees the
// shuffle: no memory, no spilled data, and a later call finds it unknown.
func TestSimRejoinAfterClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSimRejoinAfterClose)
}

func testSimRejoinAfterClose(t *testing.T) {
	f := newFrame("rejoin-closed", 16, 13, 16_000, 11)
	c := startSim(t, 4, rejoinConfig, simnet.Config{Rand: rand.New(rand.NewPCG(3, 0)), MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	b := c.run(ctx, f.spec(), loseAt(f.input(), 12, func() { c.cutOff(2) }))
	if b.Epoch != 1 {
		t.Errorf("epoch %d after cutting one node off, want 1", b.Epoch)
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	_ = c.svcs[0].CloseShuffle(ctx, f.id) // node-2 cannot hear it
	c.mendFrees(t, 2, f.id)
}

// TestSimRejoinWhileOpen: node-2 is cut off for longer than failure
// detection and comes back while the shuffle is still open, in an epoch
// that lost it. It frees its data (it owns nothing any more), and the
// shuffle goes on without it and finishes exactly once.
func TestSimRejoinWhileOpen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSimRejoinWhileOpen)
}

func testSimRejoinWhileOpen(t *testing.T) {
	f := newFrame("rejoin-open", 16, 13, 16_000, 12)
	c := startSim(t, 4, rejoinConfig, simnet.Config{Rand: rand.New(rand.NewPCG(4, 0)), MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	in := loseAt(f.input(), 12, func() {
		c.cutOff(2)
		if err := c.awaitEpochOn(0, f.id); err != nil {
			t.Error(err)
		}
		c.mendFrees(t, 2, f.id)
	})
	b := c.run(ctx, f.spec(), in)
	if b.Epoch != 1 {
		t.Errorf("epoch %d after cutting one node off, want 1", b.Epoch)
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	if _, err := c.svcs[2].Info(f.id); !freed(err) {
		t.Errorf("node-2 after the shuffle finished without it: %v, want unknown or left", err)
	}
}

// cutOff partitions node i from the others for longer than failure
// detection: both sides see the other fail. The driver stops using it.
func (c *simCluster) cutOff(i int) {
	c.mu.Lock()
	c.dead[i] = true
	c.mu.Unlock()
	if err := c.net.CutOff(fmt.Sprintf("node-%d", i)); err != nil {
		c.t.Error(err)
	}
}

// mend ends node i's partition: both sides see the other come back. The
// driver still leaves it out (the shuffles it was in lost it).
func (c *simCluster) mend(i int) {
	if err := c.net.Rejoin(fmt.Sprintf("node-%d", i)); err != nil {
		c.t.Error(err)
	}
}

// awaitEpochOn waits until node i places no partition of id on a node
// the driver counts dead: its coordinator moved past the loss.
func (c *simCluster) awaitEpochOn(i int, id string) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		locs, err := c.svcs[i].Locations(id)
		if err != nil {
			return err
		}
		onDead := false
		for _, l := range locs {
			onDead = onDead || !c.alive(c.index[l.Node])
		}
		if !onDead {
			return nil
		}
	}
	return fmt.Errorf("node-%d still places partitions of %s on a lost node", i, id)
}

// mendFrees checks that the cut-off node i still holds shuffle id, mends
// its links and waits until it lets the shuffle go.
func (c *simCluster) mendFrees(t *testing.T, i int, id string) {
	t.Helper()
	c.checkHeld(t, i, id)
	c.mend(i)
	c.awaitFreed(t, i, id)
}

// checkHeld checks that node i still holds shuffle id, with data.
func (c *simCluster) checkHeld(t *testing.T, i int, id string) {
	if _, err := c.svcs[i].Info(id); err != nil {
		t.Errorf("node-%d before it is back: %v, want it to hold %s", i, err, id)
	}
	st := c.svcs[i].Stats().Store.Shuffles[id]
	if st.MemoryPieces+st.SpilledPieces == 0 {
		t.Errorf("node-%d holds no data of %s: the test proves nothing", i, id)
	}
}

// awaitFreed waits until node i no longer holds shuffle id: unknown to
// Info, nothing of it in the spill store, in memory or on disk.
func (c *simCluster) awaitFreed(t *testing.T, i int, id string) {
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err = c.svcs[i].Info(id); freed(err) {
			break
		}
	}
	if !freed(err) {
		t.Errorf("node-%d still holds %s 5 s after it came back: %v", i, id, err)
		return
	}
	t.Logf("node-%d: %v", i, err)
	// The node forgets the shuffle before its store drops the data: wait
	// for the store too, within the same deadline.
	st := c.svcs[i].Stats().Store
	for deadline := time.Now().Add(5 * time.Second); holds(st, id) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st = c.svcs[i].Stats().Store
	}
	if holds(st, id) {
		t.Errorf("node-%d freed %s but its store still holds %+v (memory %d, disk %d bytes)", i, id, st.Shuffles[id], st.MemoryBytes, st.DiskBytesLive)
	}
}

// holds reports whether the store's stats show anything of shuffle id, or
// any data at all.
func holds(st spill.Stats, id string) bool {
	_, ok := st.Shuffles[id]
	return ok || st.MemoryBytes != 0 || st.DiskBytesLive != 0
}

// TestSimRejoinCoordinator: the coordinator, node-0, is cut off; node-1
// takes over, the shuffle finishes without node-0 and the client closes
// it. Node-0, alone, went on coordinating its own epoch with every other
// member lost; back, it learns from them that the shuffle was closed and
// frees it.
func TestSimRejoinCoordinator(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSimRejoinCoordinator)
}

func testSimRejoinCoordinator(t *testing.T) {
	f := newFrame("rejoin-coord", 16, 13, 16_000, 13)
	c := startSim(t, 4, rejoinConfig, simnet.Config{Rand: rand.New(rand.NewPCG(5, 0)), MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	b := c.run(ctx, f.spec(), loseAt(f.input(), 12, func() { c.cutOff(0) }))
	if b.Epoch == 0 {
		t.Errorf("epoch 0 after cutting the coordinator off")
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	_ = c.svcs[1].CloseShuffle(ctx, f.id) // node-0 cannot hear it
	c.mendFrees(t, 0, f.id)
}

// freed reports whether err says the node holds the shuffle no more: it is
// unknown there (closed, expired, never held), or it went on without it.
func freed(err error) bool {
	return errors.Is(err, service.ErrUnknownShuffle) || errors.Is(err, service.ErrLeft)
}
