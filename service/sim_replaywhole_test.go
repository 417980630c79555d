package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
)

// TestSimReplayWhole is TestSimReplayDiffers's changed replays with the
// create option on_differ "replay_whole": the shuffle seals, every row is
// read once, and each task's rows come from one attempt, all from its
// first production or all from a replay, whether the node was lost during
// the puts or after the seal (the shuffle reopens and seals again).
func TestSimReplayWhole(t *testing.T) {
	t.Parallel()
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost after the seal %t", after), func(t *testing.T) {
			t.Parallel()
			f := newFrame(fmt.Sprintf("whole-%t", after), 12, 11, 12_000, 5)
			c := startSim(t, 4, service.Config{}, simnet.Config{Rand: rand.New(rand.NewPCG(8, 0)), MaxDelay: time.Millisecond})
			sp := f.spec()
			sp.OnDiffer = spec.OnDifferReplayWhole
			ctx := testCtx(t)
			if err := c.runLosing(ctx, sp, changingInput(f), after, func() { c.lose(2, false) }); err != nil {
				t.Fatal(err)
			}
			c.awaitOwnersLive(t, f.id)
			other := f
			other.gen.Seed += 1000
			checkOneAttempt(t, c.rowsRead(ctx, t, f), f.rowsOf(), other.rowsOf())
		})
	}
}

// rowsRead reads every partition of f and returns each row id's hash,
// failing on a row read twice.
func (c *simCluster) rowsRead(ctx context.Context, t *testing.T, f frame) map[int64]uint64 {
	out := map[int64]uint64{}
	for p := range f.partitions {
		c.read(ctx, f.id, p, func(rec arrow.Record) {
			ids := rec.Column(1).(*array.Int64)
			for i := range ids.Len() {
				if _, dup := out[ids.Value(i)]; dup {
					t.Errorf("row %d read twice", ids.Value(i))
				}
				out[ids.Value(i)] = rowHash(rec, i)
			}
		})
	}
	return out
}

// rowsOf is, per task of f, each row id's hash.
func (f frame) rowsOf() []map[int64]uint64 {
	out := make([]map[int64]uint64, f.tasks)
	for task := range out {
		out[task] = map[int64]uint64{}
		for _, rec := range f.batches(task) {
			ids := rec.Column(1).(*array.Int64)
			for i := range ids.Len() {
				out[task][ids.Value(i)] = rowHash(rec, i)
			}
			rec.Release()
		}
	}
	return out
}

// checkOneAttempt checks that read holds every row of each task once,
// all of a task's rows from first or all from replay.
func checkOneAttempt(t *testing.T, read map[int64]uint64, first, replay []map[int64]uint64) {
	t.Helper()
	n := 0
	for task := range first {
		n += len(first[task])
		if !sameRows(read, first[task]) && !sameRows(read, replay[task]) {
			t.Errorf("task %d: its rows come from more than one attempt", task)
		}
	}
	if len(read) != n {
		t.Errorf("%d rows read, want %d", len(read), n)
	}
}

// sameRows reports whether read holds every row of want as it is there.
func sameRows(read, want map[int64]uint64) bool {
	for id, h := range want {
		if got, ok := read[id]; !ok || got != h {
			return false
		}
	}
	return true
}
