package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
)

// TestCoordinatorLoss crashes the shuffle's coordinator (whichever node
// took the create) at a seeded moment while input is being put, with
// replication 1 and 2. The first live candidate takes over, rebuilds the
// barrier from the survivors, and the verifier sees every row exactly
// once; under replication 2 nothing runs again.
func TestCoordinatorLoss(t *testing.T) {
	for _, replication := range []int{1, 2} {
		for seed := range lossSeeds() {
			t.Run(fmt.Sprintf("replication %d seed %d", replication, seed), func(t *testing.T) {
				coordinatorLoss(t, seed, replication)
			})
		}
	}
}

func coordinatorLoss(t *testing.T, seed, replication int) {
	const tasks = 24
	killAt := 2 + rand.New(rand.NewPCG(uint64(seed), 131)).IntN(tasks-6)
	nodes := startCluster(t, 4, 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	id := fmt.Sprintf("coord-loss-%d-%d", replication, seed)
	victim := make(chan string, 1)
	start := time.Now()
	rep, err := job.RunDemo(ctx, apiAddrs(nodes), job.DemoConfig{
		ID: id, Rows: 60_000, Tasks: tasks, Partitions: 30, PayloadBytes: 8, Seed: uint64(seed),
		BeforeInput: closeCoordinatorAt(t, nodes, id, killAt, victim), Parallel: 4, Replication: replication,
	})
	var name string
	select {
	case name = <-victim:
	default:
	}
	if err != nil {
		t.Fatalf("coordinator %s killed before task %d: %v", name, killAt, err)
	}
	if rep.Epoch != 1 {
		t.Errorf("final epoch %d, want 1 (the coordinator lost before task %d)", rep.Epoch, killAt)
	}
	if replication == 2 && rep.ReplaySet != 0 {
		t.Errorf("replication 2 lost its coordinator and replayed %d tasks, want 0", rep.ReplaySet)
	}
	t.Logf("coordinator %s killed before task %d: %d puts for %d tasks; replay set %d, re-runs %d; %.1f s in all",
		name, killAt, rep.Attempts, tasks, rep.ReplaySet, rep.Replayed, time.Since(start).Seconds())
}

// closeCoordinatorAt returns a BeforeInput hook that closes, in the
// background, the node coordinating shuffle id before input task at, once,
// and sends its name on victim.
func closeCoordinatorAt(t *testing.T, nodes []*node.Node, id string, at int, victim chan<- string) func(int) {
	return onceAt(at, func() {
		in, err := nodes[0].Service.Info(id)
		if err != nil {
			t.Errorf("info of %s: %v", id, err)
			victim <- ""
			return
		}
		for _, n := range nodes {
			if n.Name() == in.Coordinator {
				go n.Close()
			}
		}
		victim <- in.Coordinator
	})
}
