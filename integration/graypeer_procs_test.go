package integration

import (
	"context"
	"hash/fnv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
)

// Gray failures with real serve processes: a coordinator frozen (SIGSTOP)
// longer than failure detection and then resumed, and a data node
// restarted with the same name, data directory and addresses. Each job
// must finish, every row exactly once.

// TestProcessFreezeCoordinator SIGSTOPs the coordinator of a shuffle (the
// client's home node: it took the create, and the client waits at the
// barrier there) at a put and SIGCONTs it 20 s later. Its successor takes
// over in term 1 meanwhile; resumed, the old coordinator learns that it was
// replaced and steps down (it answers "ask another node"), and the shuffle
// seals once, in epoch 1.
func TestProcessFreezeCoordinator(t *testing.T) {
	t.Parallel()
	c := startProcs(t, 4)
	cfg := procDemo("freeze-coord", 41)
	var frozen *proc
	cfg.BeforeInput = onceAt(procParallel+2, func() {
		frozen = coordinatorProc(t, c, cfg.ID)
		freeze(t, frozen, 20*time.Second)
	})
	rep, err := runDemo(t, c.apis(), cfg)
	if frozen != nil {
		t.Logf("%s (the coordinator) frozen for 20 s", frozen.name)
	}
	checkFrozenRecovered(t, rep, err)
}

// checkFrozenRecovered checks a job whose coordinator was frozen and
// replaced: it finished (every row exactly once: RunDemo verifies) in
// epoch 1, and every task the frozen node took with it ran again. Unlike
// a kill, the puts that hung on the frozen node fail when it resumes and
// the client runs them again on its own, so some of the replays are such
// retries rather than runs the coordinator asked for: the bound is on
// every put, not on the replays asked for.
func checkFrozenRecovered(t *testing.T, rep job.Report, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("shuffle with its coordinator frozen: %v", err)
	}
	if rep.Epoch != 1 {
		t.Errorf("final epoch %d, want 1 (the frozen coordinator lost)", rep.Epoch)
	}
	if rep.Attempts < int64(rep.Tasks+rep.ReplaySet) {
		t.Errorf("%d puts for %d tasks and a replay set of %d", rep.Attempts, rep.Tasks, rep.ReplaySet)
	}
}

// freeze SIGSTOPs p and SIGCONTs it after d (or when the test ends).
func freeze(t *testing.T, p *proc, d time.Duration) {
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("freezing %s: %v", p.name, err)
	}
	var once sync.Once
	thaw := func() { once.Do(func() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }) }
	t.Cleanup(thaw)
	time.AfterFunc(d, thaw)
}

// TestProcessRestartNode SIGKILLs a data node (neither the coordinator nor
// the client's home) at a put and starts it again with the same name, data
// directory and addresses before any later task is put: once the others
// saw it gone (the coordinator declared it lost), or at once (quicker than
// failure detection: nobody saw it fail). Back, it does not hold the
// shuffle: it answers the client's puts "ask another node" (the shuffle's
// record knows it), not "unknown shuffle"; if the record still counts it
// live it tells the coordinator it restarted, which declares it lost. The
// job finishes in epoch 1.
func TestProcessRestartNode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		awaitGone bool
	}{{"after detection", true}, {"at once", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			restartDuringJob(t, tc.awaitGone)
		})
	}
}

// restartDuringJob runs TestProcessRestartNode's job.
func restartDuringJob(t *testing.T, awaitGone bool) {
	c := startProcs(t, 4)
	cfg := procDemo("restart-node", 42)
	at := procParallel + 2
	var once sync.Once
	var victim *proc
	cfg.BeforeInput = func(i int) {
		if i >= at { // every later put waits until the node is back
			once.Do(func() { victim = restartDataNode(t, c, cfg.ID, awaitGone) })
		}
	}
	rep, err := runDemo(t, c.apis(), cfg)
	if victim != nil {
		t.Logf("%s restarted before task %d", victim.name, at)
	}
	checkRecovered(t, rep, err, 1, 0, procTasks)
}

// restartDataNode SIGKILLs a process that neither coordinates shuffle id
// nor is the client's home for it, waits until the coordinator no longer
// lists it (if awaitGone), starts it again on its addresses and data
// directory, waits until it is a member again, and returns it.
func restartDataNode(t *testing.T, c *procCluster, id string, awaitGone bool) *proc {
	coord := coordinatorProc(t, c, id)
	home := clientHome(id, len(c.procs))
	i := 0
	for i == home || c.procs[i] == coord {
		i++
	}
	old := c.procs[i]
	old.kill()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if awaitGone {
		if !waitGone(coord, old, 30*time.Second) {
			t.Errorf("%s never saw %s gone", coord.name, old.name)
		}
		sleep(ctx, 2*time.Second) // the coordinator's quorum pings and epoch move
	}
	join := coord.gossip
	p, err := spawnAt(shufflenodeBinary(t), c.dir, old.name, join, old.token, old.gossip, old.api)
	if err != nil {
		t.Fatalf("restarting %s: %v", old.name, err)
	}
	c.procs[i] = p
	if err := waitMembers(ctx, p, len(c.procs)); err != nil {
		t.Errorf("restarted %s: %v", p.name, err)
	}
	return p
}

// clientHome is the index of the node the client creates shuffle id on,
// among n (FNV-1a of the ID modulo n; see client/follow.go).
func clientHome(id string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}
