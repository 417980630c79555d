package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimFetch: every partition read by a node that does not own it, over
// the cluster's streams (Fetch), is exactly what its owner serves; a read
// before the barrier is refused as not sealed, and an unknown shuffle as
// unknown, as a local read would be.
func TestSimFetch(t *testing.T) {
	t.Parallel()
	f := newFrame("fetch", 8, 11, 5_000, 3)
	want := f.expect(t)
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	if err := fetchErr(ctx, c, f.id, 0); !errors.Is(err, service.ErrNotSealed) {
		t.Fatalf("fetch before the barrier: %v, want ErrNotSealed", err)
	}
	c.settle(ctx, f.spec(), f.input(), allTasks(f.tasks))
	locs, err := c.svcs[0].Locations(f.id)
	if err != nil {
		t.Fatal(err)
	}
	got := newOutcome(f.partitions)
	part := f.partitioner(t)
	for p := range f.partitions {
		reader := c.svcs[(c.index[locs[p].Node]+1)%len(c.svcs)] // not the owner
		err := reader.Fetch(ctx, f.id, p, func(rec arrow.Record) error {
			defer rec.Release()
			return got.add(part, rec, p)
		})
		if err != nil {
			t.Fatalf("fetch partition %d: %v", p, err)
		}
	}
	if d := want.diff(got); d != "" {
		t.Fatal(d)
	}
	if err := fetchErr(ctx, c, "nope", 0); !errors.Is(err, service.ErrUnknownShuffle) {
		t.Fatalf("fetch of an unknown shuffle: %v, want ErrUnknownShuffle", err)
	}
}

func fetchErr(ctx context.Context, c *simCluster, id string, p int) error {
	return c.svcs[1].Fetch(ctx, id, p, func(rec arrow.Record) error { rec.Release(); return nil })
}
