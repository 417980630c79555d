package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/table"
)

// TestSimReserveOp: an op on a partition it reads whole reserves twice the
// bytes the partition's owner holds for it, at least what a read hands out
// (half that for one held as read, nothing for one streamed); on a
// node that does not hold it, nothing until it reads it. While the ops
// running hold the budget, the next waits until one releases, and a wait
// whose context ends fails with the bytes it wanted, reserving nothing.
func TestSimReserveOp(t *testing.T) {
	t.Parallel()
	f := newFrame("opmem", 8, 5, 4_000, 2)
	c := startSim(t, 2, service.Config{OpMemory: 1 << 30}, simnet.Config{})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	c.settle(ctx, f.spec(), f.input(), allTasks(f.tasks))
	locs, err := c.svcs[0].Locations(f.id)
	if err != nil {
		t.Fatal(err)
	}
	p := 0
	owner := c.svcs[c.index[locs[p].Node]]
	other := c.svcs[1-c.index[locs[p].Node]]
	var read int64
	err = owner.Get(ctx, f.id, p, func(rec arrow.Record) error {
		defer rec.Release()
		read += table.RecordBytes(rec)
		return nil
	})
	if err != nil || read == 0 {
		t.Fatalf("read partition %d: %d bytes, %v", p, read, err)
	}

	whole := service.OpInput{Shuffle: f.id, Copies: 2}
	m, err := owner.ReserveOp(ctx, p, 1, whole)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes() < 2*read || owner.Stats().OpMemory != m.Bytes() {
		t.Fatalf("reserved %d bytes (stats %d) for a partition read as %d bytes, want at least twice that",
			m.Bytes(), owner.Stats().OpMemory, read)
	}
	held, err := owner.ReserveOp(ctx, p, 1, service.OpInput{Shuffle: f.id, Copies: 1}, service.OpInput{Shuffle: f.id})
	if err != nil || 2*held.Bytes() != m.Bytes() {
		t.Fatalf("one copy held and one streamed: %d bytes reserved, %v; want half of %d", held.Bytes(), err, m.Bytes())
	}
	held.Release()
	if m.Passes() != 1 {
		t.Fatalf("an op within the budget: %d passes, want 1", m.Passes())
	}
	elsewhere, err := other.ReserveOp(ctx, p, 1, whole)
	if err != nil || elsewhere.Bytes() != 0 {
		t.Fatalf("op on a partition held elsewhere reserved %d bytes, %v; want 0 until read", elsewhere.Bytes(), err)
	}
	elsewhere.Release()

	m.Charge(2 << 30) // a partition read from elsewhere overdraws the budget
	done := make(chan error, 1)
	go func() {
		next, err := owner.ReserveOp(ctx, p, 1, whole)
		if err == nil {
			next.Release()
		}
		done <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "an op waiting for memory", func() bool { return owner.Stats().OpsWaiting == 1 })
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := owner.ReserveOp(cctx, p, 1, whole); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "op memory") {
		t.Fatalf("canceled wait: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("op got memory (%v) while the budget was overdrawn", err)
	case <-time.After(50 * time.Millisecond):
	}
	m.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := owner.Stats(); st.OpMemory != 0 || st.OpsWaiting != 0 || st.OpMemoryLimit != 1<<30 {
		t.Fatalf("after every op: %d bytes reserved, %d waiting, limit %d", st.OpMemory, st.OpsWaiting, st.OpMemoryLimit)
	}
	if _, err := owner.ReserveOp(ctx, p, 1, service.OpInput{Shuffle: "nope", Copies: 2}); !errors.Is(err, service.ErrUnknownShuffle) {
		t.Fatalf("op on an unknown shuffle: %v", err)
	}
}
