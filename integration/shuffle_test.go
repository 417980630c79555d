package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
)

// spilledBytes sums what the nodes' spill stores wrote to disk.
func spilledBytes(nodes []*node.Node) int64 {
	var n int64
	for _, nd := range nodes {
		n += nd.Service.Stats().Store.SpilledBytes
	}
	return n
}

// TestDataframeConservation shuffles synthetic tables through real clusters
// and verifies every row arrived exactly once in the partition of its key.
func TestDataframeConservation(t *testing.T) {
	for _, tc := range []struct {
		name       string
		nodes      int
		tasks      int
		partitions int
		rows       int64
		rule       string
		memLimit   int64
		wantSpill  bool
	}{
		{"1 to 1", 3, 1, 1, 1000, "hash", 64 << 20, false},
		{"hash 40 to 60", 3, 40, 60, 200_000, "hash", 64 << 20, false},
		{"range 30 to 25", 4, 30, 25, 100_000, "range", 64 << 20, false},
		{"1000 to 1000", 4, 1000, 1000, 200_000, "hash", 64 << 20, false},
		{"10 to 10000", 3, 10, 10000, 100_000, "hash", 64 << 20, false},
		{"spill with tiny budget", 3, 40, 50, 300_000, "hash", 2 << 20, true},
		{"1000 to 1000 spilling", 3, 1000, 1000, 300_000, "range", 2 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := startCluster(t, tc.nodes, tc.memLimit)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := job.RunDemo(ctx, apiAddrs(nodes), job.DemoConfig{
				ID: fmt.Sprintf("t%d", time.Now().UnixNano()), Rows: tc.rows, Tasks: tc.tasks,
				Partitions: tc.partitions, PayloadBytes: 16, Seed: 7, Rule: tc.rule, KeyCardinality: 1 << 20,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Attempts != int64(tc.tasks) {
				t.Errorf("%d put attempts, want %d (no failures injected)", rep.Attempts, tc.tasks)
			}
			spilled := spilledBytes(nodes)
			if tc.wantSpill != (spilled > 0) {
				t.Errorf("spilled %d bytes; want spilling: %v", spilled, tc.wantSpill)
			}
		})
	}
}
