package coordinator

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// finishTask begins and finishes task on node "b", one piece to each
// member, and reports the commits of the members in committers.
func finishTask(t *testing.T, cd *Coordinator, sh *Shuffle, task uint64, committers ...string) {
	t.Helper()
	epoch := sh.Route().Epoch
	one := barrier.Totals{Pieces: 1, Rows: 1, Bytes: 1, Checksum: 1}
	if r, err := cd.Begin(sh, &control.Msg{Op: control.OpBegin, Node: "b", Task: task, Epoch: epoch}); err != nil || r.Status != control.StatusOK {
		t.Fatalf("begin task %d: %+v, %v", task, r, err)
	}
	sent := map[string]barrier.Totals{}
	for _, m := range sh.Route().Live {
		sent[m] = one
	}
	if err := cd.Report(sh, &control.Msg{Op: control.OpDone, Node: "b", Task: task, Sent: sent, Epoch: epoch}); err != nil {
		t.Fatal(err)
	}
	for _, m := range committers {
		if err := cd.Report(sh, &control.Msg{Op: control.OpCommitted, Node: m, Task: task, Held: &one, Epoch: epoch}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHandOverHoldsTheSeal(t *testing.T) {
	ctx := context.Background()
	cd, sh, n := newFixture(t)
	finishTask(t, cd, sh, 0, "a", "b", "c")
	c, err := cd.HandOver(ctx, sh, "c")
	if err != nil || c.Op != control.OpEpoch || c.Epoch != 1 || !slices.Equal(c.Lost, []string{"c"}) {
		t.Fatalf("HandOver: %+v, %v", c, err)
	}
	if again, err := cd.HandOver(ctx, sh, "c"); err != nil || again.Epoch != 1 {
		t.Fatalf("HandOver again: %+v, %v; want the same epoch", again, err)
	}
	finishTask(t, cd, sh, 1, "a", "b")
	if ops := n.ops(); slices.Contains(ops, control.OpSeal) {
		t.Fatalf("broadcast %v: sealed before the handover finished", ops)
	}
	if r, _ := cd.Status(sh); r.Status != control.StatusRunning || len(r.Replay) != 0 || r.Replayed != 0 {
		t.Fatalf("status during the handover: %+v, want running, nothing to run", r)
	}
	if !cd.HandOverEnd(sh, "c", true, "") || cd.HandOverEnd(sh, "c", false, "late") {
		t.Fatal("a handover must end once")
	}
	if ops := n.ops(); !slices.Equal(ops[len(ops)-2:], []string{control.OpSeal, control.OpSeal}) {
		t.Fatalf("broadcast %v, want the seal to a and b once the handover finished", ops)
	}
	if r, _ := cd.Status(sh); r.Status != control.StatusSealed || r.Replayed != 0 {
		t.Fatalf("status: %+v, want sealed with nothing replayed", r)
	}
}

func TestHandOverAfterTheSealReopens(t *testing.T) {
	ctx := context.Background()
	cd, sh, n := newFixture(t)
	runTask(t, cd, sh, 0)
	runTask(t, cd, sh, 1)
	n.ops()
	c, err := cd.HandOver(ctx, sh, "c")
	if err != nil || !c.Reopen {
		t.Fatalf("HandOver after the seal: %+v, %v; want a reopen", c, err)
	}
	if r, _ := cd.Status(sh); r.Status != control.StatusRunning {
		t.Fatalf("status during the handover: %+v, want running (reads wait)", r)
	}
	cd.HandOverEnd(sh, "c", true, "")
	n.ops() // the seal's announcement runs in the background
	if r, _ := cd.Status(sh); r.Status != control.StatusSealed || r.Epoch != 1 || r.Replayed != 0 {
		t.Fatalf("status after the handover: %+v, want sealed in epoch 1, nothing replayed", r)
	}
}

func TestHandOverFallsBackOnce(t *testing.T) {
	ctx := context.Background()
	cd, sh, _ := newFixture(t)
	finishTask(t, cd, sh, 0, "a", "b", "c")
	if _, err := cd.HandOver(ctx, sh, "c"); err != nil {
		t.Fatal(err)
	}
	if !cd.HandOverEnd(sh, "c", false, "killed") || cd.HandOverEnd(sh, "c", false, "killed") {
		t.Fatal("a fallback must happen once")
	}
	r, _ := cd.Status(sh)
	if r.Status != control.StatusRunning || !slices.Equal(r.Replay, []uint64{0, 1}) || r.Replayed != 1 {
		t.Fatalf("status after the fallback: %+v, want task 0 replayed (and 1 never run)", r)
	}
}

func TestHandOverRefusesTheCoordinatorAndStrangers(t *testing.T) {
	cd, sh, _ := newFixture(t)
	for _, node := range []string{"a", "z"} {
		if _, err := cd.HandOver(context.Background(), sh, node); !errors.Is(err, shuffle.ErrBadInput) {
			t.Errorf("HandOver(%s): %v, want ErrBadInput", node, err)
		}
	}
}

// laterNode is a fakeNode whose background work waits for run: a
// conclude that starts late.
type laterNode struct {
	fakeNode
	queued []func(context.Context)
}

func (n *laterNode) Go(fn func(ctx context.Context)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.queued = append(n.queued, fn)
}

// run runs the work queued so far.
func (n *laterNode) run() {
	n.mu.Lock()
	q := n.queued
	n.queued = nil
	n.mu.Unlock()
	for _, fn := range q {
		fn(context.Background())
	}
}

// TestSealDecidedBeforeAHandoverIsNotAnnouncedInIt: the barrier is
// reached, but the seal's announcement starts only after a drain's
// handover moved the epoch (and reopened the shuffle). It must not go
// out: the members would seal while the handover runs and, when it falls
// back, refuse the tasks it replays as sealed for good.
func TestSealDecidedBeforeAHandoverIsNotAnnouncedInIt(t *testing.T) {
	ctx := context.Background()
	cd, sh, _ := newFixture(t)
	n := &laterNode{}
	cd.cfg.Node = n
	runTask(t, cd, sh, 0)
	runTask(t, cd, sh, 1) // the barrier is reached: its announcement waits
	if len(n.queued) != 1 {
		t.Fatalf("%d announcements queued, want the seal's", len(n.queued))
	}
	if _, err := cd.HandOver(ctx, sh, "c"); err != nil {
		t.Fatal(err)
	}
	n.run()
	if ops := n.ops(); slices.Contains(ops, control.OpSeal) {
		t.Fatalf("broadcast %v: the seal of epoch 0 went out in epoch 1, during the handover", ops)
	}
	if !cd.HandOverEnd(sh, "c", false, "killed") {
		t.Fatal("the handover did not end")
	}
	n.run()
	if ops := n.ops(); slices.Contains(ops, control.OpSeal) {
		t.Fatalf("broadcast %v: sealed although the fallback replays", ops)
	}
	if r, _ := cd.Status(sh); r.Status != control.StatusRunning || !slices.Equal(r.Replay, []uint64{0, 1}) {
		t.Fatalf("status after the fallback: %+v, want running with tasks 0 and 1 to replay", r)
	}
}
