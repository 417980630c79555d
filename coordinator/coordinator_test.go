package coordinator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/wire"
)

// fakeNode records broadcasts and runs background work at once.
type fakeNode struct {
	mu     sync.Mutex
	sent   []control.Msg
	forgot int
	wg     sync.WaitGroup
	// drops is how many of the next messages to each node are lost (a
	// negative count: all of them).
	drops map[string]int
}

func (n *fakeNode) Broadcast(_ context.Context, nodes []string, m control.Msg) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, to := range nodes {
		if d := n.drops[to]; d != 0 {
			n.drops[to] = d - 1
			return fmt.Errorf("%s to %s: request dropped", m.Op, to)
		}
		n.sent = append(n.sent, m)
	}
	return nil
}

func (n *fakeNode) Go(fn func(ctx context.Context)) { n.wg.Go(func() { fn(context.Background()) }) }

func (n *fakeNode) Forget(string, uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forgot++
}

// ops lists the ops broadcast so far.
func (n *fakeNode) ops() []string {
	n.wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, m := range n.sent {
		out = append(out, m.Op)
	}
	return out
}

var members = []string{"a", "b", "c"}

// newFixture is a coordinator on node "a" of a two-task array shuffle.
func newFixture(t *testing.T) (*Coordinator, *Shuffle, *fakeNode) {
	t.Helper()
	return newFixtureWait(t, time.Second, nil)
}

// newFixtureWait is newFixture with a LossWait of wait on clk (nil: the
// wall clock).
func newFixtureWait(t *testing.T, wait time.Duration, clk clock.Clock) (*Coordinator, *Shuffle, *fakeNode) {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 2, DType: "|u1",
		OldChunks: spec.Chunks{{2, 2}}, NewChunks: spec.Chunks{{2, 2}}}
	st, err := shuffle.New(sp, "a", members, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := NewShuffle(st)
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNode{}
	cd := New(Config{Node: n, Log: testkit.Quiet(), LossWait: wait, Clock: clk})
	return cd, sh, n
}

// runTask begins, finishes and commits task on node "b", one piece to each member.
func runTask(t *testing.T, cd *Coordinator, sh *Shuffle, task uint64) {
	t.Helper()
	one := barrier.Totals{Pieces: 1, Rows: 1, Bytes: 1, Checksum: 1}
	if r, err := cd.Begin(sh, &control.Msg{Op: control.OpBegin, Node: "b", Task: task}); err != nil || r.Status != control.StatusOK {
		t.Fatalf("begin task %d: %+v, %v", task, r, err)
	}
	sent := map[string]barrier.Totals{"a": one, "b": one, "c": one}
	if err := cd.Report(sh, &control.Msg{Op: control.OpDone, Node: "b", Task: task, Sent: sent}); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if err := cd.Report(sh, &control.Msg{Op: control.OpCommitted, Node: m, Task: task, Held: &one}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSealThenLossReopens(t *testing.T) {
	cd, sh, n := newFixture(t)
	runTask(t, cd, sh, 0)
	runTask(t, cd, sh, 1)
	if ops := n.ops(); !slices.Equal(ops, []string{"seal", "seal", "seal"}) {
		t.Fatalf("broadcast %v, want a seal to every member", ops)
	}
	if r, err := cd.Status(sh); err != nil || r.Status != control.StatusSealed {
		t.Fatalf("status after the seal: %+v, %v", r, err)
	}
	cd.Lose(context.Background(), sh, "c")
	if ops := n.ops(); !slices.Equal(ops[3:], []string{"epoch"}) {
		t.Fatalf("after the loss broadcast %v, want one epoch to the survivor b", ops[3:])
	}
	r, err := cd.Status(sh)
	if err != nil || r.Status != control.StatusRunning || r.Epoch != 1 || !slices.Equal(r.Replay, []uint64{0, 1}) {
		t.Fatalf("status after losing c: %+v, %v; want running in epoch 1, replaying 0 and 1", r, err)
	}
}

// TestSealReachesALiveMemberOnALossyNetwork: a member that is still one is
// told the seal past announceTries lost messages, for up to LossWait; a
// member that never takes it fails the shuffle once LossWait has passed,
// not before. The retries' back-off and LossWait run on a synctest
// bubble's clock: no wall time passes.
func TestSealReachesALiveMemberOnALossyNetwork(t *testing.T) {
	for _, tc := range []struct {
		name   string
		drops  int // of the seals to c; -1: all
		wait   time.Duration
		sealed bool
	}{
		{"lossy", announceTries + 1, 10 * time.Second, true},
		{"never", -1, 30 * time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cd, sh, n := newFixtureWait(t, tc.wait, nil)
				n.drops = map[string]int{"c": tc.drops}
				start := time.Now()
				runTask(t, cd, sh, 0)
				runTask(t, cd, sh, 1)
				ops := n.ops()
				took := time.Since(start)
				r, err := cd.Status(sh)
				if tc.sealed && (err != nil || r.Status != control.StatusSealed || !slices.Equal(ops, []string{"seal", "seal", "seal"}) || took >= tc.wait) {
					t.Fatalf("status %+v, %v after broadcasting %v for %v; want sealed on every member within %v", r, err, ops, took, tc.wait)
				}
				if !tc.sealed && (!errors.Is(err, shuffle.ErrFailed) || !slices.Contains(ops, "fail") || took < tc.wait) {
					t.Fatalf("status %+v, %v after broadcasting %v for %v; want failed once %v passed", r, err, ops, took, tc.wait)
				}
			})
		})
	}
}

// TestLossWaitOnTheConfigClock: LossWait is measured on Config.Clock: a
// member that never takes the seal is asked again for as long as that
// clock has not moved LossWait on, however long the retries take.
func TestLossWaitOnTheConfigClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC))
		cd, sh, n := newFixtureWait(t, time.Second, f)
		n.drops = map[string]int{"c": -1}
		runTask(t, cd, sh, 0)
		runTask(t, cd, sh, 1)
		time.Sleep(time.Minute) // the bubble's time: the retries run, the Fake stands still
		if _, err := cd.Status(sh); err != nil {
			t.Fatalf("failed after a minute of retries within LossWait on the node's clock: %v", err)
		}
		f.Advance(time.Second)
		ops := n.ops()
		if _, err := cd.Status(sh); !errors.Is(err, shuffle.ErrFailed) || !slices.Contains(ops, "fail") {
			t.Fatalf("status %v after broadcasting %v once LossWait passed on the node's clock; want failed", err, ops)
		}
	})
}

func TestBeginChecksEpochAndConflicts(t *testing.T) {
	cd, sh, _ := newFixture(t)
	if r, _ := cd.Begin(sh, &control.Msg{Node: "b", Task: 0, Epoch: 1}); r.Status != control.StatusStale {
		t.Errorf("begin of a newer epoch: %q, want stale", r.Status)
	}
	if r, _ := cd.Begin(sh, &control.Msg{Node: "b", Task: 0}); r.Status != control.StatusOK {
		t.Errorf("begin: %q, want ok", r.Status)
	}
	if r, _ := cd.Begin(sh, &control.Msg{Node: "c", Task: 0}); r.Status != control.StatusConflict {
		t.Errorf("the same attempt on another node: %q, want conflict", r.Status)
	}
}

func TestDoneOfAnOlderEpochIsRefused(t *testing.T) {
	cd, sh, _ := newFixture(t)
	cd.Lose(context.Background(), sh, "c")
	err := cd.Report(sh, &control.Msg{Op: control.OpDone, Node: "b", Task: 0, Epoch: 0})
	var r *shuffle.Refusal
	if !errors.As(err, &r) || r.Code != wire.RefuseStaleEpoch || !errors.Is(err, shuffle.ErrStaleEpoch) {
		t.Fatalf("done of epoch 0 in epoch 1: %v, want a stale-epoch refusal", err)
	}
}

func TestApplyEpoch(t *testing.T) {
	cd, sh, n := newFixture(t)
	if err := cd.ApplyEpoch(sh.State, &control.Msg{Epoch: 1, Lost: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	if rt := sh.Route(); rt.Epoch != 1 || slices.Contains(rt.Live, "c") || n.forgot != 1 {
		t.Fatalf("after the epoch: epoch %d, live %v, forgot %d", rt.Epoch, rt.Live, n.forgot)
	}
	if err := cd.ApplyEpoch(sh.State, &control.Msg{Epoch: 2, Lost: []string{"c", "a"}}); err == nil {
		t.Fatal("this node declared lost: no error")
	}
	if ph, _ := sh.Status(); ph != shuffle.Failed {
		t.Fatalf("declared lost: phase %s, want failed", ph)
	}
}
