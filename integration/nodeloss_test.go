package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/spec"
)

// lossSeeds is how many seeded kill moments TestNodeLoss tries: a few by
// default, SHUFFLENODE_SOAK=N for a longer soak.
func lossSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("SHUFFLENODE_SOAK")); err == nil && n > 0 {
		return n
	}
	return 3
}

// TestNodeLoss crashes one node (not the coordinator) at a seeded moment
// while input is being put, and checks with the independent verifier that
// every row still arrives exactly once, after replaying only what the node
// took with it.
func TestNodeLoss(t *testing.T) {
	for seed := range lossSeeds() {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { nodeLoss(t, seed, 1) })
	}
}

// TestNodeLossReplicated loses a node of a replication-2 shuffle: the
// backups serve its partitions and no task runs again.
func TestNodeLossReplicated(t *testing.T) {
	for seed := range lossSeeds() {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { nodeLoss(t, seed, 2) })
	}
}

func nodeLoss(t *testing.T, seed, replication int) {
	const tasks = 24
	rng := rand.New(rand.NewPCG(uint64(seed), 99))
	victim, killAt := 1+rng.IntN(3), rng.IntN(tasks)
	nodes := startCluster(t, 4, 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	kill := closeAt(nodes[victim], killAt, true)
	rep, err := job.RunDemo(ctx, apiAddrs(nodes), job.DemoConfig{
		ID: fmt.Sprintf("loss-%d", seed), Rows: 60_000, Tasks: tasks, Partitions: 30,
		PayloadBytes: 8, Seed: uint64(seed), BeforeInput: kill, Parallel: 4, Replication: replication,
	})
	if err != nil {
		t.Fatalf("node-%d killed before task %d: %v", victim, killAt, err)
	}
	// A kill in the last tasks may come after the barrier: the epoch then
	// moves after the report (reads follow the moved partitions).
	if rep.Epoch != 1 && (killAt < tasks-4 || rep.Epoch > 1) {
		t.Errorf("final epoch %d, want 1 (one node lost before task %d)", rep.Epoch, killAt)
	}
	if rep.ReplaySet > tasks {
		t.Errorf("replay set of %d tasks out of %d", rep.ReplaySet, tasks)
	}
	if replication == 2 && rep.ReplaySet != 0 {
		t.Errorf("replication 2 lost one node and replayed %d tasks, want 0", rep.ReplaySet)
	}
	t.Logf("node-%d killed before task %d: %d puts for %d tasks; replay set %d, re-runs %d",
		victim, killAt, rep.Attempts, tasks, rep.ReplaySet, rep.Replayed)
}

// TestNodeLossDuringReads crashes a node that owns output partitions after
// the seal, while the outputs are being read, in a shuffle without
// replication: the lost partitions are rebuilt by replaying the tasks that
// sent them rows, the reads of the moved partitions wait for that, and the
// verifier still sees every row exactly once.
func TestNodeLossDuringReads(t *testing.T) {
	for seed := range lossSeeds() {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			const tasks, partitions = 24, 30
			rng := rand.New(rand.NewPCG(uint64(seed), 77))
			victim, killAt := 1+rng.IntN(3), rng.IntN(partitions)
			nodes := startCluster(t, 4, 64<<20)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := job.RunDemo(ctx, apiAddrs(nodes), job.DemoConfig{
				ID: fmt.Sprintf("read-loss-%d", seed), Rows: 60_000, Tasks: tasks, Partitions: partitions,
				PayloadBytes: 8, Seed: uint64(seed), Parallel: 4, ReadParallel: 2,
				BeforeRead: closeAt(nodes[victim], killAt, false),
			})
			if err != nil {
				t.Fatalf("node-%d killed before reading partition %d: %v", victim, killAt, err)
			}
			if rep.Epoch != 1 {
				t.Errorf("final epoch %d, want 1 (one node lost during the reads)", rep.Epoch)
			}
			// Every task sent rows to every node (30 partitions over 4), so
			// the replay set is every task.
			if rep.ReplaySet != tasks {
				t.Errorf("replay set of %d tasks, want all %d", rep.ReplaySet, tasks)
			}
			t.Logf("node-%d killed before reading partition %d: replay set %d, re-runs %d, read %.1f s",
				victim, killAt, rep.ReplaySet, rep.Replayed, rep.ReadSeconds)
		})
	}
}

// TestArrayNodeLoss crashes a node (not the coordinator) during an array
// rechunk: while old chunks are put (even seeds) or while new chunks are
// read after the seal (odd seeds). The rechunk must finish with every
// element where its global index says, one epoch later.
func TestArrayNodeLoss(t *testing.T) {
	for seed := range lossSeeds() {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 55))
			old := spec.Chunks{repeat(10, 12), repeat(10, 4)} // 48 old chunks
			new := spec.Chunks{repeat(15, 8), repeat(20, 2)}  // 16 new chunks
			victim, at := 1+rng.IntN(3), rng.IntN(16)
			nodes := startCluster(t, 4, 64<<20)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			kill := closeAt(nodes[victim], at, false)
			cfg := job.ArrayConfig{ID: fmt.Sprintf("arr-loss-%d", seed), DType: "<i4", Old: old, New: new, Parallel: 4}
			phase := "putting old chunk"
			if seed%2 == 0 {
				cfg.BeforeInput = kill
			} else {
				cfg.BeforeRead, phase = kill, "reading new chunk"
			}
			rep, err := job.RunArrayDemo(ctx, apiAddrs(nodes), cfg)
			if err != nil {
				t.Fatalf("node-%d killed before %s %d: %v", victim, phase, at, err)
			}
			if rep.Epoch != 1 {
				t.Errorf("final epoch %d, want 1", rep.Epoch)
			}
			t.Logf("node-%d killed before %s %d: re-runs %d", victim, phase, at, rep.Replayed)
		})
	}
}

// repeat returns n chunks of size c.
func repeat(c int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// closeAt returns a BeforeInput (or BeforeRead) hook that closes n before
// input task (or partition) at, once; in the background if async (the
// put goes on while the node goes away), else before the hook returns.
func closeAt(n *node.Node, at int, async bool) func(int) {
	return onceAt(at, func() {
		if async {
			go n.Close()
		} else {
			n.Close()
		}
	})
}
