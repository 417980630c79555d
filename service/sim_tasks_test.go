package service_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// TestSimTaskBatchPerTask: the coordinator answers each report of a batch
// as the single message it stands for: a stale done is refused on its own
// with the code a single stale done gets, while the batch's other reports
// are taken.
func TestSimTaskBatchPerTask(t *testing.T) {
	t.Parallel()
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	f := newFrame("tbatch", 4, 3, 100, 1)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	coord, from := c.svcs[0], member.Member{Name: c.svcs[1].Name()}
	staleDone := control.TaskReport{Op: control.OpDone, Task: 2, Epoch: 7}
	single := staleDone.Msg(f.id, from.Name)
	rt, reply := coord.Handle(ctx, from, controlFrame(t, single))
	ref, err := wire.DecodeRefusal(reply)
	if rt != wire.TypeRefused || err != nil || ref.Code != wire.RefuseStaleEpoch {
		t.Fatalf("a single stale done: reply %v %q (%v), want a stale-epoch refusal", rt, reply, err)
	}
	batch := control.Msg{Op: control.OpTasks, Shuffle: f.id, Node: from.Name, Tasks: []control.TaskReport{
		{Op: control.OpBegin, Task: 0},
		{Op: control.OpBegin, Task: 1, Epoch: 3},
		staleDone,
		{Op: control.OpSeal, Task: 3},
		{Op: control.OpBegin, Task: 0, Attempt: 0},
	}}
	got := taskReplies(t, coord, from, batch)
	want := []control.TaskReply{
		{Status: control.StatusOK},
		{Status: control.StatusStale},
		{Code: uint16(wire.RefuseStaleEpoch)},
		{Code: uint16(wire.RefuseBadRequest)},
		{Status: control.StatusOK}, // the same attempt on the same node: begun again
	}
	for i := range want {
		if got[i].Code != want[i].Code || got[i].Status != want[i].Status {
			t.Errorf("report %d (%+v): answer %+v, want code %d status %q", i, batch.Tasks[i], got[i], want[i].Code, want[i].Status)
		}
	}
	other := control.Msg{Op: control.OpBegin, Shuffle: f.id, Node: c.svcs[2].Name(), Task: 0}
	if r := taskReplies(t, coord, from, control.Msg{Op: control.OpTasks, Shuffle: f.id, Node: other.Node, Tasks: []control.TaskReport{{Op: control.OpBegin, Task: 0}}}); r[0].Status != control.StatusConflict {
		t.Errorf("task 0 attempt 0 begun again from another node in a batch: %+v, want a conflict", r[0])
	}
}

// taskReplies sends batch to s as from and returns the reply's entries,
// one per report.
func taskReplies(t *testing.T, s *service.Service, from member.Member, batch control.Msg) []control.TaskReply {
	t.Helper()
	rt, reply := s.Handle(context.Background(), from, controlFrame(t, batch))
	if rt != wire.TypeAck {
		t.Fatalf("a batch of task reports: reply %v %q, want an ack", rt, reply)
	}
	var r control.Reply
	if err := json.Unmarshal(reply, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != len(batch.Tasks) {
		t.Fatalf("%d answers to %d reports", len(r.Tasks), len(batch.Tasks))
	}
	return r.Tasks
}

// TestSimBatchedPuts: many puts at once on one node send their begins and
// dones in batches, and every row still arrives exactly once.
func TestSimBatchedPuts(t *testing.T) {
	t.Parallel()
	// Deliveries that take a while keep a batch in flight while other puts
	// report, however the goroutines are scheduled (one CPU included).
	c := startSim(t, 3, service.Config{}, simnet.Config{MaxDelay: 5 * time.Millisecond})
	ctx := testCtx(t)
	f := newFrame("tbatched", 96, 7, 20_000, 3)
	sp := f.spec()
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for task := range uint64(f.tasks) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := c.putOnce(ctx, 1, sp, f.input(), task, 0); err != nil {
				t.Errorf("put task %d: %v", task, err)
			}
		})
	}
	wg.Wait()
	if _, err := c.svcs[0].Barrier(ctx, f.id); err != nil {
		t.Fatal(err)
	}
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	b, n := c.svcs[1].TaskBatches()
	t.Logf("%d batches of %d reports", b, n)
	if b == 0 || n < 2*b {
		t.Errorf("%d puts at once sent %d batches of %d reports, want batches of several", 32, b, n)
	}
}
