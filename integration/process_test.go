package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/job"
)

// Shape of every process test's shuffle: small, so that 20 seeds stay
// short; each seed's cost is mostly memberlist noticing the crash (~5 s).
const (
	procRows       = 20_000
	procTasks      = 24
	procPartitions = 30
	procParallel   = 4 // concurrent puts: bounds how many tasks run at a kill
)

// processSeeds is how many seeded kill moments TestProcessKillDuringPuts
// tries: 20 by default, SHUFFLENODE_SOAK=N for a longer soak.
func processSeeds() int {
	if n, err := strconv.Atoi(os.Getenv("SHUFFLENODE_SOAK")); err == nil && n > 0 {
		return n
	}
	return 20
}

// procDemo is the demo shuffle of the process tests.
func procDemo(id string, seed uint64) job.DemoConfig {
	return job.DemoConfig{ID: id, Rows: procRows, Tasks: procTasks, Partitions: procPartitions,
		PayloadBytes: 8, Seed: seed, Parallel: procParallel}
}

// runDemo runs cfg on nodes, bounded so that a hang fails the test.
func runDemo(t *testing.T, nodes []string, cfg job.DemoConfig) (job.Report, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := job.RunDemo(ctx, nodes, cfg)
	t.Logf("shuffle %s: %.1f s; %d puts for %d tasks, epoch %d, replay set %d, re-runs %d",
		cfg.ID, time.Since(start).Seconds(), rep.Attempts, cfg.Tasks, rep.Epoch, rep.ReplaySet, rep.Replayed)
	return rep, err
}

// killAt returns a BeforeInput (or BeforeRead) hook that SIGKILLs victim
// (and waits until it is gone) before input task (or partition) at, once.
func killAt(victim *proc, at int) func(int) {
	var once sync.Once
	return func(task int) {
		if task == at {
			once.Do(victim.kill)
		}
	}
}

// replayBounds is what a kill before input task at allows of the replay
// set: every task done at the kill sent data to the victim (it owns
// partitions of every task's rows) and is replayed; at most parallel-1
// tasks after at had started, and any task before at-parallel+1 was done.
func replayBounds(at, parallel, tasks int) (lo, hi int) {
	return max(0, at-parallel+1), min(tasks, at+parallel-1)
}

// coordinatorReplayBounds is replayBounds for a kill of the coordinator:
// until a successor takes over (failure detection, ~5 s), every put fails
// at once (its begin cannot reach the coordinator), so the client's
// workers go through their attempts and on to later tasks, and any task
// after at may end up pending and run again; the tasks done before the
// kill are still all replayed.
func coordinatorReplayBounds(at, parallel, tasks int) (lo, hi int) {
	lo, _ = replayBounds(at, parallel, tasks)
	return lo, tasks
}

// checkRecovered fails t unless the shuffle finished (RunDemo verified
// every row exactly once) in epoch killed, with a replay set in [lo, hi].
func checkRecovered(t *testing.T, rep job.Report, err error, killed, lo, hi int) {
	t.Helper()
	if err != nil {
		t.Fatalf("shuffle with %d node(s) killed: %v", killed, err)
	}
	if rep.Epoch != uint64(killed) {
		t.Errorf("final epoch %d, want %d (nodes killed)", rep.Epoch, killed)
	}
	if rep.ReplaySet < lo || rep.ReplaySet > hi {
		t.Errorf("replay set of %d tasks, want %d..%d of %d", rep.ReplaySet, lo, hi, rep.Tasks)
	}
	// Every task of the replay set was done once and run again: at the
	// barrier's ask, or before it by a client retry (a batched put whose
	// stream broke after the task was done).
	if want := int64(rep.Tasks + rep.ReplaySet); rep.Attempts < want {
		t.Errorf("%d puts, fewer than the %d tasks plus the replay set %d", rep.Attempts, rep.Tasks, rep.ReplaySet)
	}
}

// TestProcessJoin starts a serve process that joins another, as docs/cli.md
// shows, and checks that both serve the API and list each other.
func TestProcessJoin(t *testing.T) {
	t.Parallel()
	startProcs(t, 2)
}

// TestProcessKillDuringPuts SIGKILLs one serve process (it may be the
// coordinator: the client creates on a node chosen from the shuffle ID) before a seeded input task and checks that the shuffle
// finishes with every row exactly once, one epoch later, having replayed
// only the tasks done before the kill.
func TestProcessKillDuringPuts(t *testing.T) {
	t.Parallel()
	for seed := range processSeeds() {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), 6))
			victim, at := 1+rng.IntN(3), rng.IntN(procTasks)
			c := startProcs(t, 4)
			cfg := procDemo(fmt.Sprintf("puts-%d", seed), uint64(seed))
			cfg.BeforeInput = killAt(c.procs[victim], at)
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("seed %d: %s killed before task %d", seed, c.procs[victim].name, at)
			lo, hi := replayBounds(at, procParallel, procTasks)
			checkRecovered(t, rep, err, 1, lo, hi)
		})
	}
}

// TestProcessKillInputOnly SIGKILLs a process that owns no output
// partition (3 partitions over 5 nodes) and only ran input tasks: the
// tasks it finished sent their rows to the survivors, so nothing is
// replayed; only its unfinished puts run again elsewhere.
func TestProcessKillInputOnly(t *testing.T) {
	t.Parallel()
	c := startProcs(t, 5)
	rng := rand.New(rand.NewPCG(7, 6))
	cfg := procDemo("input-only", 7)
	cfg.Partitions = 3
	at := len(c.procs) + rng.IntN(procTasks-len(c.procs)) // after its first tasks
	var victim atomic.Pointer[proc]
	var pick, once sync.Once
	cfg.BeforeInput = func(task int) {
		pick.Do(func() { victim.Store(nonOwner(t, c, cfg.ID, rng)) })
		if v := victim.Load(); task == at && v != nil {
			once.Do(v.kill)
		}
	}
	rep, err := runDemo(t, c.apis(), cfg)
	if victim.Load() == nil {
		t.Fatal("no process without output partitions")
	}
	t.Logf("%s (input only) killed before task %d", victim.Load().name, at)
	checkRecovered(t, rep, err, 1, 0, 0)
}

// nonOwner picks a process other than the coordinator (proc-0) that owns
// no output partition of shuffle id, or nil.
func nonOwner(t *testing.T, c *procCluster, id string, rng *rand.Rand) *proc {
	cl, err := client.Dial(c.procs[0].api)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer cl.Close()
	eps, err := cl.Locations(context.Background(), id)
	if err != nil {
		t.Error(err)
		return nil
	}
	owns := make([]bool, len(c.procs))
	owns[0] = true
	for _, ep := range eps {
		if i := c.byAPI(ep.Addr); i >= 0 {
			owns[i] = true
		}
	}
	var free []*proc
	for i, o := range owns {
		if !o {
			free = append(free, c.procs[i])
		}
	}
	if len(free) == 0 {
		return nil
	}
	return free[rng.IntN(len(free))]
}

// TestProcessKillOutputOnly SIGKILLs a process that owns output partitions
// but runs no input task (the client puts through the others only): the
// tasks done before the kill sent it rows and are replayed, no more.
func TestProcessKillOutputOnly(t *testing.T) {
	t.Parallel()
	c := startProcs(t, 4)
	rng := rand.New(rand.NewPCG(8, 6))
	victim, at := 1+rng.IntN(3), rng.IntN(procTasks)
	var others []int
	for i := range c.procs {
		if i != victim {
			others = append(others, i)
		}
	}
	cfg := procDemo("output-only", 8)
	cfg.BeforeInput = killAt(c.procs[victim], at)
	rep, err := runDemo(t, c.apis(others...), cfg)
	t.Logf("%s (outputs only) killed before task %d", c.procs[victim].name, at)
	lo, hi := replayBounds(at, procParallel, procTasks)
	checkRecovered(t, rep, err, 1, lo, hi)
}

// TestProcessKillTwo SIGKILLs one process during the puts and, once the
// coordinator saw it go, a second one at a seeded put of the replays: two
// epochs, every row exactly once. A put of a task that was done at the
// first kill (one before the replay set's lower bound) that comes again is
// a replay, which runs only after the coordinator moved to the first
// epoch; the second kill comes at one of those, so it happens however
// late a member list shows the first one gone (a count of puts after that
// list dropped it found too few left under load, and killed nobody).
func TestProcessKillTwo(t *testing.T) {
	t.Parallel()
	c := startProcs(t, 5)
	rng := rand.New(rand.NewPCG(9, 6))
	first, at := 1+rng.IntN(4), procParallel+rng.IntN(procTasks-2*procParallel)
	lo, hi := replayBounds(at, procParallel, procTasks)
	second, after := 1+(first+rng.IntN(3))%4, 1+rng.IntN(max(lo, 1))
	cfg := procDemo("two", 9)
	var mu sync.Mutex
	seen, replays := map[int]bool{}, 0
	var secondOnce sync.Once
	killFirst := killAt(c.procs[first], at)
	cfg.BeforeInput = func(task int) {
		killFirst(task)
		if task >= lo {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[task] {
			if replays++; replays == after {
				secondOnce.Do(c.procs[second].kill)
			}
		}
		seen[task] = true
	}
	rep, err := runDemo(t, c.apis(), cfg)
	t.Logf("%s killed before task %d, %s before the %d. replay of a task done by then",
		c.procs[first].name, at, c.procs[second].name, after)
	if c.procs[second].alive() {
		t.Fatalf("%s was never killed: %v", c.procs[second].name, err)
	}
	checkRecovered(t, rep, err, 2, lo, hi+procTasks)
}

// waitGone polls observer's member list until victim leaves it.
func waitGone(observer, victim *proc, limit time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cl, err := client.Dial(observer.api)
	if err != nil {
		return false
	}
	defer cl.Close()
	for ctx.Err() == nil {
		ms, err := cl.Members(ctx)
		if err == nil && !hasMember(ms, victim.name) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestProcessKillCoordinator SIGKILLs the coordinator (whichever process
// took the create) at seeded moments of the puts: its successor takes over,
// and the shuffle finishes with every row exactly once, one epoch later,
// having replayed at most the tasks done before the kill. SHUFFLENODE_SOAK=N
// runs N seeds.
func TestProcessKillCoordinator(t *testing.T) {
	t.Parallel()
	for seed := range soakSeeds(3) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			c := startProcs(t, 4)
			at := rand.New(rand.NewPCG(uint64(seed), 10)).IntN(procTasks)
			cfg := procDemo(fmt.Sprintf("coord-kill-%d", seed), uint64(seed))
			cfg.BeforeInput = onceAt(at, func() { coordinatorProc(t, c, cfg.ID).kill() })
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("coordinator killed before task %d", at)
			lo, hi := coordinatorReplayBounds(at, procParallel, procTasks)
			checkRecovered(t, rep, err, 1, lo, hi)
		})
	}
}

// coordinatorProc returns the process that coordinates shuffle id.
func coordinatorProc(t *testing.T, c *procCluster, id string) *proc {
	cl, err := client.Dial(c.procs[0].api)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	st, err := cl.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.procs {
		if p.name == st.Coordinator {
			return p
		}
	}
	t.Fatalf("shuffle %s: coordinator %q is none of the processes", id, st.Coordinator)
	return nil
}

// TestProcessKillAtBarrier SIGKILLs a process right after the last put
// returned, when the client is about to wait at the barrier. Whether the
// coordinator had announced the seal or not, the victim's partitions are
// rebuilt by replays and every row arrives exactly once.
func TestProcessKillAtBarrier(t *testing.T) {
	t.Parallel()
	for v := 1; v <= 3; v++ {
		t.Run(fmt.Sprintf("proc-%d", v), func(t *testing.T) {
			c := startProcs(t, 4)
			victim := c.procs[v]
			cfg := procDemo(fmt.Sprintf("barrier-%d", v), uint64(v))
			var once sync.Once
			cfg.Progress = func(phase string, done, total int) {
				if phase == "put" && done == total {
					once.Do(victim.kill)
				}
			}
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("%s killed after the last put", victim.name)
			checkRecovered(t, rep, err, 1, 0, procTasks)
		})
	}
}

// TestProcessKillDuringReads SIGKILLs a process (it may be the coordinator)
// before a seeded output partition is read, after the seal, in a shuffle
// without replication: the client waits for the loss to be seen, replays
// the tasks that sent the victim rows (every task: each owns partitions of
// every task's rows), reads the moved partitions from their new owners, and
// every row arrives exactly once.
func TestProcessKillDuringReads(t *testing.T) {
	t.Parallel()
	for seed := range 3 {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 14))
			victim, at := 1+rng.IntN(3), rng.IntN(procPartitions)
			c := startProcs(t, 4)
			cfg := procDemo(fmt.Sprintf("reads-%d", seed), uint64(seed))
			cfg.BeforeRead = killAt(c.procs[victim], at)
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("%s killed before reading partition %d", c.procs[victim].name, at)
			checkRecovered(t, rep, err, 1, procTasks, procTasks)
		})
	}
}

// TestProcessKillReplicated SIGKILLs one process of a replication-2
// shuffle at seeded moments of the puts, and once right after the last
// put: the backups hold its data, so no task is replayed, and every row
// still arrives exactly once.
func TestProcessKillReplicated(t *testing.T) {
	t.Parallel()
	for seed := range 3 {
		t.Run(fmt.Sprintf("puts seed %d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 12))
			victim, at := 1+rng.IntN(3), rng.IntN(procTasks)
			c := startProcs(t, 4)
			cfg := procDemo(fmt.Sprintf("repl-%d", seed), uint64(seed))
			cfg.Replication = 2
			cfg.BeforeInput = killAt(c.procs[victim], at)
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("%s killed before task %d", c.procs[victim].name, at)
			checkRecovered(t, rep, err, 1, 0, 0)
		})
	}
	t.Run("after the last put", func(t *testing.T) {
		c := startProcs(t, 4)
		victim := c.procs[2]
		cfg := procDemo("repl-barrier", 12)
		cfg.Replication = 2
		var once sync.Once
		cfg.Progress = func(phase string, done, total int) {
			if phase == "put" && done == total {
				once.Do(victim.kill)
			}
		}
		rep, err := runDemo(t, c.apis(), cfg)
		if err != nil {
			t.Fatalf("%s killed after the last put: %v", victim.name, err)
		}
		// The barrier may have answered before the loss was seen (epoch 0):
		// then the reads found the victim's partitions on their backups.
		if rep.Epoch > 1 || rep.ReplaySet != 0 {
			t.Errorf("epoch %d, replay set %d: want epoch 0 or 1 and nothing replayed", rep.Epoch, rep.ReplaySet)
		}
	})
}
