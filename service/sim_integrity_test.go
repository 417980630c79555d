package service_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
)

// changingInput is f's input whose second and later productions of a task
// (its replays) hold other rows: as many, from another seed.
func changingInput(f frame) input {
	other := f
	other.gen.Seed += 1000
	var mu sync.Mutex
	made := map[int]int{}
	return input{recs: func(task int) []arrow.Record {
		mu.Lock()
		made[task]++
		n := made[task]
		mu.Unlock()
		if n == 1 {
			return f.batches(task)
		}
		return other.batches(task)
	}}
}

// TestSimReplayDiffers: a node is lost and the tasks that sent it data run
// again. A deterministic replay seals and every row is read once; a replay
// whose rows differ fails the shuffle with ErrReplayDiffers naming the
// shuffle, a task and a partition, instead of serving the first attempt's
// rows of the partitions that stayed beside the replay's of those that
// moved.
func TestSimReplayDiffers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		after   bool // lose the node after the seal
		changes bool
	}{
		{name: "deterministic replay after the seal", after: true},
		{name: "deterministic replay during puts"},
		{name: "changed replay after the seal", after: true, changes: true},
		{name: "changed replay during puts", changes: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFrame(fmt.Sprintf("differs-%t-%t", tc.after, tc.changes), 12, 11, 12_000, 5)
			c := startSim(t, 4, service.Config{}, simnet.Config{Rand: rand.New(rand.NewPCG(7, 0)), MaxDelay: time.Millisecond})
			in := f.input()
			if tc.changes {
				in = changingInput(f)
			}
			ctx := testCtx(t)
			lose := func() { c.lose(2, false) }
			if tc.changes && !tc.after {
				// A replay can only differ from an attempt that was
				// committed: lose the node once some tasks were.
				lose = func() { c.awaitCommitted(t, f.id, 4); c.lose(2, false) }
			}
			err := c.runLosing(ctx, f.spec(), in, tc.after, lose)
			if !tc.changes {
				if err != nil {
					t.Fatal(err)
				}
				c.awaitOwnersLive(t, f.id)
				if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
					t.Fatal(d)
				}
				return
			}
			checkDiffers(t, f.id, err)
		})
	}
}

// awaitCommitted waits until shuffle id's coordinator counts n tasks
// committed at all of their receivers.
func (c *simCluster) awaitCommitted(t *testing.T, id string, n int) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, fmt.Sprintf("%d tasks of %s committed", n, id), func() bool {
		for _, svc := range c.svcs {
			if p, err := svc.Progress(id); err == nil && p.TasksCommitted >= n {
				return true
			}
		}
		return false
	})
}

// checkDiffers checks that err is the replay-differs failure of shuffle id
// and names a task and a partition.
func checkDiffers(t *testing.T, id string, err error) {
	t.Helper()
	if !errors.Is(err, service.ErrReplayDiffers) || !errors.Is(err, service.ErrFailed) {
		t.Fatalf("barrier after a changed replay: %v, want ErrFailed and ErrReplayDiffers", err)
	}
	if !regexp.MustCompile(`shuffle ` + id + ` task \d+ partition \d+`).MatchString(err.Error()) {
		t.Errorf("the error does not name the shuffle, task and partition: %v", err)
	}
}

// runLosing creates sp, puts every task and settles the barrier as run
// does, calling lose while the puts run or, with after, once the shuffle
// sealed (then it settles again in the next epoch). It returns the first
// barrier error.
func (c *simCluster) runLosing(ctx context.Context, sp *spec.Spec, in input, after bool, lose func()) error {
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		return err
	}
	tasks := make([]uint64, sp.Tasks)
	for i := range tasks {
		tasks[i] = uint64(i)
	}
	if !after {
		in = loseAt(in, 4, lose)
	}
	b, err := c.settleErr(ctx, sp, in, tasks, 0)
	if err != nil || !after {
		return err
	}
	lose()
	for b.Epoch < 1 && err == nil { // until the coordinator saw the loss
		time.Sleep(5 * time.Millisecond)
		b, err = c.settleErr(ctx, sp, in, nil, 1)
	}
	return err
}

// settleErr is settle that returns the barrier's error (after puts, or
// once) instead of failing the test; it stops at a seal in epoch epoch or
// later.
func (c *simCluster) settleErr(ctx context.Context, sp *spec.Spec, in input, tasks []uint64, epoch uint64) (service.BarrierResult, error) {
	for round := 0; round <= 10; round++ {
		perr := c.putAllUntilFailed(ctx, sp, in, tasks)
		b, err := c.svcs[c.liveNode(c.asker)].Barrier(ctx, sp.ID)
		if perr != nil && err == nil {
			c.t.Errorf("puts of %s failed, and the barrier did not (%+v): %v", sp.ID, b, perr)
		}
		if err != nil || (b.Sealed && b.Epoch >= epoch) || (b.Sealed && len(tasks) == 0) {
			return b, err
		}
		tasks = b.Replay
		time.Sleep(time.Duration(20<<round) * time.Millisecond)
	}
	return service.BarrierResult{}, fmt.Errorf("shuffle %s not sealed after 10 rounds", sp.ID)
}

// putAllUntilFailed is putAll that returns the puts' final errors instead
// of failing the test: a put may fail because the shuffle failed (a replay
// that differs fails it while others are put), which the barrier then says.
func (c *simCluster) putAllUntilFailed(ctx context.Context, sp *spec.Spec, in input, tasks []uint64) error {
	var wg sync.WaitGroup
	errs := make([]error, len(tasks))
	for i, task := range tasks {
		wg.Go(func() {
			if err := c.putTask(ctx, sp, in, task); err != nil && !c.retryable(ctx, err) {
				errs[i] = fmt.Errorf("put task %d: %w", task, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
