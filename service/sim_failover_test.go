package service_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/wire"
)

// failoverCase is one run of TestSimCoordinatorLoss.
type failoverCase struct {
	name        string
	when        string // "puts", "barrier" or "sealed": when node-0, the coordinator, is killed
	replication int
	also        int // another node killed with the coordinator (0: none)
	nodes       int // cluster size (0: 4)
	budget      int64
}

var failoverCases = []failoverCase{
	{name: "during puts", when: "puts"},
	{name: "during puts spilling", when: "puts", budget: tinyBudget},
	{name: "at the barrier", when: "barrier"},
	{name: "after the seal", when: "sealed"},
	{name: "during puts replication 2", when: "puts", replication: 2},
	{name: "at the barrier replication 2", when: "barrier", replication: 2},
	{name: "after the seal replication 2", when: "sealed", replication: 2},
	// 5 nodes: 3 of 5 survive, a strict majority (2 of 4 would not take
	// over: TestSimTwoOfFourNoTakeover).
	{name: "with a data node during puts", when: "puts", also: 2, nodes: 5},
	{name: "with a data node after the seal", when: "sealed", also: 2, nodes: 5},
}

// TestSimCoordinatorLoss: the coordinator (node-0, which created the
// shuffle) is killed while tasks are put, while the barrier settles, or
// after the seal before the outputs are read, alone or with a data node.
// The first live candidate takes over in a higher term, rebuilds the
// barrier from what the survivors tell it, and the shuffle seals; every row
// is read exactly once, with the input's checksums.
func TestSimCoordinatorLoss(t *testing.T) {
	t.Parallel()
	for _, tc := range failoverCases {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				t.Parallel()
				runFailover(t, tc, seed)
			})
		}
	}
}

// runFailover runs one case on 4 nodes (or tc.nodes) with 1 ms of jitter.
func runFailover(t *testing.T, tc failoverCase, seed uint64) {
	f := newFrame("failover", 16, 13, 16_000, 11)
	want := f.expect(t)
	c := startSim(t, cmp.Or(tc.nodes, 4), service.Config{MemoryLimit: tc.budget, LossWait: 10 * time.Second},
		simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)), MaxDelay: time.Millisecond})
	c.asker = 3
	ctx := testCtx(t)
	sp := f.spec()
	sp.Replication = tc.replication
	kill := func() {
		c.kill(0)
		if tc.also != 0 {
			c.kill(tc.also)
		}
	}
	in := f.input()
	if tc.when == "puts" {
		in = loseAt(in, 5, kill)
	}
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	tasks := allTasks(sp.Tasks)
	if tc.when == "barrier" {
		c.putAll(ctx, sp, in, tasks)
		go kill() // while the barrier settles: commits and the seal are in flight
		tasks = nil
	}
	b := c.settle(ctx, sp, in, tasks)
	switch {
	case tc.when == "sealed":
		kill()
		b = c.settleAfterLoss(ctx, t, sp.ID, in, f)
	case tc.when == "barrier" && b.Epoch == 0:
		// the seal beat the kill (commit reports go in batches, so the
		// barrier may settle in one round trip): the loss reopens the
		// sealed shuffle, and it must settle again in the next epoch
		b = c.settleAfterLoss(ctx, t, sp.ID, in, f)
	}
	checkFailover(t, c, f.id, b, tc)
	c.awaitOwnersLive(t, f.id)
	if d := want.diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

func allTasks(n int) []uint64 {
	tasks := make([]uint64, n)
	for i := range tasks {
		tasks[i] = uint64(i)
	}
	return tasks
}

// settleAfterLoss waits until a survivor follows a new coordinator, then
// settles the shuffle again (the loss may have reopened it).
func (c *simCluster) settleAfterLoss(ctx context.Context, t *testing.T, id string, in input, f frame) service.BarrierResult {
	asker := c.svcs[c.liveNode(c.asker)]
	for ctx.Err() == nil {
		info, err := asker.Info(id)
		if err != nil {
			t.Fatal(err)
		}
		if info.Coordinator != "node-0" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	sp := f.spec()
	return c.settle(ctx, sp, in, nil)
}

// checkFailover checks that a survivor coordinates the sealed shuffle, in
// the epoch without the lost nodes.
func checkFailover(t *testing.T, c *simCluster, id string, b service.BarrierResult, tc failoverCase) {
	t.Helper()
	in, err := c.svcs[c.liveNode(c.asker)].Info(id)
	if err != nil {
		t.Fatal(err)
	}
	lost := uint64(1)
	if tc.also != 0 {
		lost = 2
	}
	if !b.Sealed || b.Epoch != lost || in.Coordinator == "node-0" || !c.alive(c.index[in.Coordinator]) {
		t.Fatalf("after losing the coordinator: sealed %v epoch %d (want %d), coordinator %s", b.Sealed, b.Epoch, lost, in.Coordinator)
	}
	if tc.replication == 2 && tc.also == 0 && b.ReplaySet != 0 {
		t.Errorf("replication 2 lost one node and replayed %d tasks, want 0", b.ReplaySet)
	}
}

// TestSimStaleTermRefused: once a successor took over, a seal, fail or
// epoch move of the old coordinator's term (it was only cut off and came
// back) is refused by every member with an error naming the shuffle, the
// term and the node; the shuffle is unchanged.
func TestSimStaleTermRefused(t *testing.T) { synctest.Test(t, testSimStaleTermRefused) }

func testSimStaleTermRefused(t *testing.T) {
	f := newFrame("stale", 4, 5, 2_000, 3)
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	c.asker = 2
	ctx := testCtx(t)
	c.run(ctx, f.spec(), f.input())
	c.kill(0)
	b := c.settleAfterLoss(ctx, t, f.id, f.input(), f)
	if !b.Sealed {
		t.Fatal("not sealed after the takeover")
	}
	for _, m := range []control.Msg{
		{Op: control.OpFail, Shuffle: f.id, Node: "node-0", Term: 0, Reason: "old coordinator"},
		{Op: control.OpSeal, Shuffle: f.id, Node: "node-0", Term: 0},
		{Op: control.OpEpoch, Shuffle: f.id, Node: "node-0", Term: 0, Epoch: 1, Lost: []string{"node-1"}},
	} {
		for i := 1; i < 3; i++ {
			reason := refusedControl(t, c.svcs[i], m)
			for _, want := range []string{"stale coordinator term", f.id, "term 0", "node-0"} {
				if !strings.Contains(reason, want) {
					t.Errorf("%s of term 0 on node-%d: refusal %q does not say %q", m.Op, i, reason, want)
				}
			}
		}
	}
	if in, _ := c.svcs[1].Info(f.id); in.Phase != service.Sealed {
		t.Fatalf("after stale decisions: phase %s, want sealed", in.Phase)
	}
}

// TestSimStaleSealRefused: a seal of an epoch that a loss has moved the
// shuffle on from (sent before the loss, delivered after the move) is
// refused by the members that moved, naming the shuffle, the epochs and the
// sender; they stay open for the replays. A seal of an epoch a member has
// not reached yet asks to be sent again. The replays then seal the new
// epoch, and every row is read once.
func TestSimStaleSealRefused(t *testing.T) { synctest.Test(t, testSimStaleSealRefused) }

func testSimStaleSealRefused(t *testing.T) {
	f := newFrame("staleseal", 4, 5, 2_000, 3)
	want := f.expect(t)
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	c.run(ctx, f.spec(), f.input())
	c.kill(2)
	c.awaitOwnersLive(t, f.id)
	stale := control.Msg{Op: control.OpSeal, Shuffle: f.id, Node: "node-0", Term: 0, Epoch: 0}
	for i := range 2 {
		if in, _ := c.svcs[i].Info(f.id); in.Phase == service.Sealed {
			t.Fatalf("node-%d still sealed after the loss", i)
		}
		reason := refusedControl(t, c.svcs[i], stale)
		for _, w := range []string{"stale epoch", f.id, "seal of epoch 0", "node-0", fmt.Sprintf("node-%d is at epoch 1", i)} {
			if !strings.Contains(reason, w) {
				t.Errorf("seal of epoch 0 on node-%d: refusal %q does not say %q", i, reason, w)
			}
		}
		if in, _ := c.svcs[i].Info(f.id); in.Phase == service.Sealed {
			t.Fatalf("a seal of epoch 0 sealed node-%d in epoch 1", i)
		}
	}
	ahead := stale
	ahead.Epoch = 2
	body, _ := json.Marshal(ahead)
	if typ, _ := c.svcs[1].Handle(ctx, member.Member{Name: "node-0"}, wire.Frame{Type: wire.TypeControl, Payload: body}); typ != wire.TypeBusy {
		t.Errorf("seal of epoch 2 at epoch 1: %s, want busy", typ)
	}
	if b := c.settleEpoch(ctx, t, f, f.input(), 1); b.Epoch != 1 {
		t.Fatalf("sealed in epoch %d, want 1", b.Epoch)
	}
	if d := want.diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// refusedControl hands m to svc as a peer frame and returns the refusal's
// reason (failing the test if it was not refused).
func refusedControl(t *testing.T, svc *service.Service, m control.Msg) string {
	t.Helper()
	body, _ := json.Marshal(m)
	typ, reply := svc.Handle(context.Background(), member.Member{Name: m.Node}, wire.Frame{Type: wire.TypeControl, Payload: body})
	if typ != wire.TypeRefused {
		t.Fatalf("%s of term %d accepted (%s)", m.Op, m.Term, typ)
	}
	r, err := wire.DecodeRefusal(reply)
	if err != nil {
		t.Fatal(err)
	}
	return r.Reason
}

// TestSimCoordinatorLossTwice: the coordinator is killed during the puts,
// then, once its successor took over, the successor too: two takeovers in
// one shuffle, every row still read exactly once.
func TestSimCoordinatorLossTwice(t *testing.T) {
	t.Parallel()
	for _, replication := range []int{1, 2} {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("replication %d seed %d", replication, seed), func(t *testing.T) {
				t.Parallel()
				f := newFrame("twice", 16, 13, 16_000, 5)
				want := f.expect(t)
				c := startSim(t, 5, service.Config{LossWait: 10 * time.Second},
					simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)), MaxDelay: time.Millisecond})
				c.asker = 4
				ctx := testCtx(t)
				sp := f.spec()
				sp.Replication = replication
				in := loseAt(f.input(), 4, func() { c.kill(0) })
				in = loseAt(in, 12, func() { c.kill(c.index[c.awaitSuccessor(t, f.id, "node-0")]) })
				if err := c.svcs[0].Create(ctx, sp); err != nil {
					t.Fatal(err)
				}
				b := c.settle(ctx, sp, in, allTasks(sp.Tasks))
				if !b.Sealed || b.Epoch != 2 {
					t.Fatalf("sealed %v in epoch %d, want 2", b.Sealed, b.Epoch)
				}
				c.awaitOwnersLive(t, f.id)
				if d := want.diff(c.collect(ctx, t, f)); d != "" {
					t.Fatal(d)
				}
			})
		}
	}
}

// awaitSuccessor waits until a live node follows a coordinator other than
// old, and returns it.
func (c *simCluster) awaitSuccessor(t *testing.T, id, old string) string {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		in, err := c.svcs[c.liveNode(c.asker)].Info(id)
		if err == nil && in.Coordinator != old {
			return in.Coordinator
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Errorf("shuffle %s: no node took over from %s", id, old)
	return old
}

// TestSimArrayCoordinatorLoss: an array rechunk whose coordinator is killed
// while old chunks are put still places every element where its global
// index says.
func TestSimArrayCoordinatorLoss(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testSimArrayCoordinatorLoss)
}

func testSimArrayCoordinatorLoss(t *testing.T) {
	dt, err := rechunk.ParseDType("<i4")
	if err != nil {
		t.Fatal(err)
	}
	g := grid{old: spec.Chunks{{4, 4, 4, 4}, {5, 5, 5}}, new: spec.Chunks{{8, 8}, {3, 3, 3, 3, 3}}, dt: dt}
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second}, simnet.Config{MaxDelay: time.Millisecond})
	c.asker = 3
	ctx := testCtx(t)
	var n atomic.Int64
	in := input{chunk: func(task int) rechunk.Chunk {
		if n.Add(1) == 5 {
			c.kill(0)
		}
		return g.chunk(g.old, task)
	}}
	sp := spec.ArraySpec("arr-coord", "<i4", g.old, g.new)
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	if b := c.settle(ctx, sp, in, allTasks(sp.Tasks)); !b.Sealed || b.Epoch != 1 {
		t.Fatalf("sealed %v in epoch %d, want 1", b.Sealed, b.Epoch)
	}
	c.awaitOwnersLive(t, sp.ID)
	for p := range count(g.new) {
		got, err := c.owner(sp.ID, p).GetChunk(ctx, sp.ID, p)
		if want := g.chunk(g.new, p); err != nil || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("new chunk %d: %v; bytes differ: %v", p, err, !bytes.Equal(got.Data, want.Data))
		}
	}
}

// TestSimCoordinatorLossLossy: the coordinator is killed during the puts
// while 20% of all requests and 20% of all replies (control frames too:
// takeover, begin, done, committed, seal) are lost, before or after their
// handler ran.
func TestSimCoordinatorLossLossy(t *testing.T) {
	t.Parallel()
	for seed := range uint64(6) {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			f := newFrame("lossy-coord", 12, 7, 6_000, 17)
			var on atomic.Bool
			c := startSim(t, 4, service.Config{LossWait: 5 * time.Second}, simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)),
				MaxDelay: time.Millisecond, DropRequest: 0.2, DropReply: 0.2,
				Faulty: func(string, string, wire.Type) bool { return on.Load() }})
			c.asker = 3
			ctx := testCtx(t)
			if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
				t.Fatal(err)
			}
			on.Store(true)
			b := c.settle(ctx, f.spec(), loseAt(f.input(), 4, func() { c.kill(0) }), allTasks(f.tasks))
			on.Store(false)
			if b.Epoch != 1 {
				t.Errorf("epoch %d, want 1", b.Epoch)
			}
			c.awaitOwnersLive(t, f.id)
			if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestSimMissedCreate: a member that does not hold the shuffle (it missed
// the create) is asked to follow the successor of a lost coordinator: it
// installs the shuffle from its record and takes part; every row is read
// exactly once. The record then names the successor, in term 1 and epoch 1.
func TestSimMissedCreate(t *testing.T) { synctest.Test(t, testSimMissedCreate) }

func testSimMissedCreate(t *testing.T) {
	f := newFrame("missed", 8, 7, 4_000, 9)
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second}, simnet.Config{RecordRank: record.Rank})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	members := []string{"node-0", "node-1", "node-2", "node-3"}
	next, _, _ := shuffle.CoordinatorOf(f.id, "node-0", members, []string{"node-0"})
	forgetful := c.index[slices.DeleteFunc(slices.Clone(members[1:]), func(m string) bool { return m == next })[0]]
	c.asker = forgetful
	c.awaitRecord(t, f.id, func(r *record.Record) bool { return r.Term == 0 })
	c.svcs[forgetful].ForgetShuffle(f.id)
	c.kill(0)
	c.awaitRecord(t, f.id, func(r *record.Record) bool { return r.Term == 1 && r.Epoch == 1 && r.Coordinator == next })
	if b := c.settle(ctx, f.spec(), f.input(), allTasks(f.tasks)); !b.Sealed || b.Epoch != 1 {
		t.Fatalf("sealed %v in epoch %d", b.Sealed, b.Epoch)
	}
	if in, err := c.svcs[forgetful].Info(f.id); err != nil || in.Coordinator != next {
		t.Fatalf("node-%d: %+v, %v; want it to follow %s", forgetful, in, err, next)
	}
	c.awaitOwnersLive(t, f.id)
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// awaitRecord waits until shuffle id's record satisfies ok.
func (c *simCluster) awaitRecord(t *testing.T, id string, ok func(*record.Record) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := c.svcs[c.liveNode(1)].FetchRecord(context.Background(), id)
		if err == nil && ok(r) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("shuffle %s: the record never reached the state wanted", id)
}

// TestSimMinorityNoTakeover: three of four nodes, the coordinator among
// them, are lost at once, before the coordinator's epoch moves can reach
// the survivor (each delivery waits up to 20 ms; a node cut off alone sees
// the same): the survivor, a minority of one, does
// not take over, and its shuffle keeps the old coordinator.
func TestSimMinorityNoTakeover(t *testing.T) { synctest.Test(t, testSimMinorityNoTakeover) }

func testSimMinorityNoTakeover(t *testing.T) {
	f := newFrame("minority", 8, 7, 4_000, 9)
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second},
		simnet.Config{Rand: rand.New(rand.NewPCG(5, 0)), MaxDelay: 20 * time.Millisecond})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.svcs[3].Info(f.id); err != nil {
		t.Fatal(err)
	}
	c.kill(1)
	c.kill(2)
	c.kill(0)
	time.Sleep(500 * time.Millisecond)
	in, err := c.svcs[3].Info(f.id)
	if err != nil || in.Coordinator != "node-0" {
		t.Fatalf("node-3 alone: %+v, %v; want it to keep node-0 as coordinator", in, err)
	}
}
