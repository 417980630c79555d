package integration

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Coordinator failover with real serve processes killed by SIGKILL: each
// test runs one seed by default (a few seconds each, mostly memberlist
// noticing the crash); SHUFFLENODE_SOAK=N runs N seeded kill moments.

// soakSeeds is how many seeds a failover process test runs: def, or N
// with SHUFFLENODE_SOAK=N.
func soakSeeds(def int) int {
	if n, err := strconv.Atoi(os.Getenv("SHUFFLENODE_SOAK")); err == nil && n > 0 {
		return n
	}
	return def
}

// TestProcessKillCoordinatorAndSuccessor SIGKILLs the coordinator and its
// first successor candidate together at a seeded put: the third candidate
// takes over in term 2, and the shuffle finishes with every row exactly
// once, two epochs later.
func TestProcessKillCoordinatorAndSuccessor(t *testing.T) {
	t.Parallel()
	for seed := range soakSeeds(1) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 5)
			at := procParallel + rand.New(rand.NewPCG(uint64(seed), 21)).IntN(procTasks-2*procParallel)
			cfg := procDemo(fmt.Sprintf("coord-succ-%d", seed), uint64(seed))
			var names []string
			cfg.BeforeInput = onceAt(at, func() { names = killCoordinatorAndSuccessor(t, c, cfg.ID) })
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("coordinator and successor %v killed before task %d", names, at)
			lo, hi := coordinatorReplayBounds(at, procParallel, procTasks)
			checkRecovered(t, rep, err, 2, lo, hi)
		})
	}
}

// killCoordinatorAndSuccessor SIGKILLs, at the same moment, the coordinator
// of shuffle id (term 0: its creator) and the first candidate after it, and
// returns their names.
func killCoordinatorAndSuccessor(t *testing.T, c *procCluster, id string) []string {
	coord := coordinatorProc(t, c, id)
	members := make([]string, 0, len(c.procs))
	for _, p := range c.procs {
		members = append(members, p.name)
	}
	slices.Sort(members)
	succ, term, ok := shuffle.CoordinatorOf(id, coord.name, members, []string{coord.name})
	if !ok || term != 1 {
		t.Fatalf("shuffle %s: no successor of %s (term %d)", id, coord.name, term)
	}
	var wg sync.WaitGroup
	for _, p := range c.procs {
		if p == coord || p.name == succ {
			wg.Go(p.kill)
		}
	}
	wg.Wait()
	return []string{coord.name, succ}
}

// TestProcessKillClientNode SIGKILLs the client's first node (Nodes[0],
// where its first puts go; the shuffle ID is chosen so that another node
// takes the create and coordinates) at a seeded put: the client puts on the
// next nodes, and every row arrives exactly once, one epoch later.
func TestProcessKillClientNode(t *testing.T) {
	t.Parallel()
	for seed := range soakSeeds(1) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 4)
			at := rand.New(rand.NewPCG(uint64(seed), 22)).IntN(procTasks)
			cfg := procDemo(notHomedOn0(fmt.Sprintf("client-node-%d", seed), len(c.procs)), uint64(seed))
			cfg.BeforeInput = onceAt(at, func() {
				if coordinatorProc(t, c, cfg.ID) == c.procs[0] {
					t.Errorf("shuffle %s is coordinated by the client's first node", cfg.ID)
				}
				c.procs[0].kill()
			})
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("%s (the client's first node) killed before task %d", c.procs[0].name, at)
			lo, hi := replayBounds(at, procParallel, procTasks)
			// The client's puts to its first node fail at once and go to the
			// next node while its other puts wait on sends to the victim: up to
			// parallel more tasks may have started before the loss is declared
			// (CI saw 18 against at+parallel-1 = 16 once, under the load of the
			// other packages' tests).
			checkRecovered(t, rep, err, 1, lo, min(procTasks, hi+procParallel))
		})
	}
}

// notHomedOn0 returns base, or base with a suffix, such that the client
// creates it on another node than Nodes[0] of n (the client picks the
// node by FNV-1a of the ID modulo n; see client/follow.go).
func notHomedOn0(base string, n int) string {
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-%d", base, i)
		h := fnv.New32a()
		h.Write([]byte(id))
		if h.Sum32()%uint32(n) != 0 {
			return id
		}
	}
}

// TestProcessKillCoordinatorArray SIGKILLs the coordinator of an array
// rechunk (24 old chunks into 8 new ones) at a seeded put: its successor
// takes over, and every element of every new chunk is checked, one epoch
// later.
func TestProcessKillCoordinatorArray(t *testing.T) {
	t.Parallel()
	old := spec.Chunks{slices.Repeat([]int64{500}, procTasks)}
	rechunked := spec.Chunks{slices.Repeat([]int64{1500}, 8)}
	for seed := range soakSeeds(1) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 4)
			at := rand.New(rand.NewPCG(uint64(seed), 23)).IntN(procTasks)
			id := fmt.Sprintf("coord-array-%d", seed)
			cfg := job.ArrayConfig{ID: id, Old: old, New: rechunked, Parallel: procParallel,
				BeforeInput: onceAt(at, func() { coordinatorProc(t, c, id).kill() })}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := job.RunArrayDemo(ctx, c.apis(), cfg)
			if err != nil {
				t.Fatalf("coordinator killed before old chunk %d: %v", at, err)
			}
			if rep.Epoch != 1 {
				t.Errorf("final epoch %d, want 1 (the coordinator killed)", rep.Epoch)
			}
			t.Logf("coordinator killed before old chunk %d: %.1f s, %d re-runs", at, rep.TotalSeconds, rep.Replayed)
		})
	}
}
