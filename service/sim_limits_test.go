package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// TestSimLimits: a create over a node's caps is refused with ErrLimit,
// naming the shuffle and the limit's flag, and leaves nothing behind; one
// within them still works.
func TestSimLimits(t *testing.T) {
	t.Parallel()
	c := startSim(t, 2, service.Config{MaxShuffles: 2, MaxTasks: 8, MaxPartitions: 4}, simnet.Config{})
	ctx := testCtx(t)
	coord := c.svcs[0]
	for _, tc := range []struct {
		name    string
		f       frame
		mention string
	}{
		{"too many tasks", newFrame("big-tasks", 9, 4, 100, 1), "--max-tasks"},
		{"too many partitions", newFrame("big-parts", 8, 5, 100, 1), "--max-partitions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := coord.Create(ctx, tc.f.spec())
			if !errors.Is(err, service.ErrLimit) || !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), tc.f.id) {
				t.Fatalf("Create: %v, want ErrLimit naming %s and %s", err, tc.f.id, tc.mention)
			}
		})
	}
	for _, id := range []string{"a", "b"} {
		if err := coord.Create(ctx, newFrame(id, 8, 4, 100, 1).spec()); err != nil {
			t.Fatal(err)
		}
	}
	err := c.svcs[1].Create(ctx, newFrame("third", 1, 1, 100, 1).spec())
	if !errors.Is(err, service.ErrLimit) || !strings.Contains(err.Error(), "--max-shuffles") || !strings.Contains(err.Error(), "third") {
		t.Fatalf("third Create: %v, want ErrLimit naming --max-shuffles", err)
	}
	for _, s := range c.svcs {
		if got := len(s.Shuffles()); got != 2 {
			t.Errorf("%s holds %d shuffles, want 2", s.Name(), got)
		}
	}
	if err := coord.CloseShuffle(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.svcs[1].Create(ctx, newFrame("third", 1, 1, 100, 1).spec()); err != nil {
		t.Fatalf("Create after a close: %v", err)
	}
}

// TestSimMemberLimits: a member with lower caps than the coordinator
// refuses the create; the create fails naming that member and the limit,
// and no member keeps the shuffle.
func TestSimMemberLimits(t *testing.T) {
	t.Parallel()
	c := startSim(t, 2, service.Config{}, simnet.Config{})
	strict := service.Config{MaxPartitions: 2, Logger: simLogger()}
	c.add(2, strict)
	ctx := testCtx(t)
	err := c.svcs[0].Create(ctx, newFrame("wide", 4, 3, 100, 1).spec())
	if err == nil || !strings.Contains(err.Error(), "--max-partitions") || !strings.Contains(err.Error(), "node-2") {
		t.Fatalf("Create: %v, want a refusal naming node-2 and --max-partitions", err)
	}
	for _, s := range c.svcs {
		if got := s.Shuffles(); len(got) != 0 {
			t.Errorf("%s holds %v after the refused create", s.Name(), got)
		}
	}
}

// TestSimRunsLimit: an array spec whose cyclic axis has more blocks than
// the node's MaxRuns is refused with ErrLimit before it is planned, on the
// coordinator and on a member with a lower cap; none keeps it.
func TestSimRunsLimit(t *testing.T) {
	t.Parallel()
	c := startSim(t, 2, service.Config{MaxRuns: 1 << 10}, simnet.Config{})
	ctx := testCtx(t)
	err := c.svcs[0].Create(ctx, cyclicArraySpec("cyclic-big", 1<<23))
	if !errors.Is(err, service.ErrLimit) || !strings.Contains(err.Error(), "--max-runs") || !strings.Contains(err.Error(), "cyclic-big") {
		t.Fatalf("Create: %v, want ErrLimit naming cyclic-big and --max-runs", err)
	}
	if err := c.svcs[0].Create(ctx, cyclicArraySpec("cyclic-small", 1000)); err != nil {
		t.Fatalf("Create within the cap: %v", err)
	}
	for _, s := range c.svcs {
		if got := len(s.Shuffles()); got != 1 {
			t.Errorf("%s holds %d shuffles, want 1", s.Name(), got)
		}
	}
}

// TestSimPlanErrorOnCoordinator: a spec that passes the cheap checks but
// does not plan is refused as bad input by the coordinator, which installs
// it first: no member holds it after.
func TestSimPlanErrorOnCoordinator(t *testing.T) {
	t.Parallel()
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	sp := cyclicArraySpec("cyclic-bad", 64)
	sp.OldChunks[0][0]++ // the sizes do not match the dist: only planning finds out
	if err := c.svcs[1].Create(ctx, sp); !errors.Is(err, service.ErrBadInput) || !strings.Contains(err.Error(), "cyclic-bad") {
		t.Fatalf("Create: %v, want ErrBadInput naming cyclic-bad", err)
	}
	for _, s := range c.svcs {
		if got := len(s.Shuffles()); got != 0 {
			t.Errorf("%s holds %d shuffles, want 0", s.Name(), got)
		}
	}
}

// cyclicArraySpec is a 1-d array of blocks elements dealt one at a time to
// 4 old chunks, rechunked into one new chunk.
func cyclicArraySpec(id string, blocks int64) *spec.Spec {
	return &spec.Spec{ID: id, Kind: spec.Array, DType: "<f8", Tasks: 4, Partitions: 1,
		OldChunks: spec.Chunks{splitaxes.CyclicSizes(blocks, 4, 1)}, NewChunks: spec.Chunks{{blocks}},
		OldDist: []*splitaxes.Dist{{Type: splitaxes.Cyclic, Size: blocks, BlockSize: 1}}}
}
