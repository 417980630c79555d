package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// TestSimTwoOfFourNoTakeover: the coordinator and a data node of 4 crash at
// once. The 2 survivors are half, not a strict majority: they do not take
// over (the shuffle keeps node-0 as coordinator), and a barrier asked of
// one of them says at once why nothing goes on, as a retryable error.
func TestSimTwoOfFourNoTakeover(t *testing.T) { synctest.Test(t, testSimTwoOfFourNoTakeover) }

func testSimTwoOfFourNoTakeover(t *testing.T) {
	f := newFrame("two-of-four", 8, 7, 4_000, 9)
	c := twoOfFourGone(t, f, simnet.Config{MaxDelay: time.Millisecond})
	for _, i := range []int{1, 3} {
		if in, err := c.svcs[i].Info(f.id); err != nil || in.Coordinator != "node-0" {
			t.Errorf("node-%d: %+v, %v; want it to keep node-0 as coordinator", i, in, err)
		}
	}
	checkNoQuorum(t, c.svcs[3], f.id, "node-3", "up 2 of 4 members")
}

// twoOfFourGone starts 4 nodes on a network configured by net, creates
// f's shuffle on node-0 (its coordinator) and kills node-0 and node-2 at
// once: the 2 survivors are half, not a strict majority. It returns once
// the survivors have seen both fail.
func twoOfFourGone(t *testing.T, f frame, net simnet.Config) *simCluster {
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second}, net)
	if err := c.svcs[0].Create(testCtx(t), f.spec()); err != nil {
		t.Fatal(err)
	}
	c.kill(0)
	c.kill(2)
	time.Sleep(500 * time.Millisecond)
	return c
}

// TestSimLocationsOfGoneOwners: with the coordinator and another member
// gone and no quorum to move the epoch, the partitions they own are still
// theirs; their locations give the API address each last had, never an
// empty one (a read there fails as unavailable, and the client recovers).
func TestSimLocationsOfGoneOwners(t *testing.T) { synctest.Test(t, testSimLocationsOfGoneOwners) }

func testSimLocationsOfGoneOwners(t *testing.T) {
	f := newFrame("gone-owners", 8, 7, 4_000, 9)
	api := func(name string) string { return name + ":7947" } // never dialed
	c := twoOfFourGone(t, f, simnet.Config{MaxDelay: time.Millisecond, APIAddr: api})
	locs, err := c.svcs[1].Locations(f.id)
	if err != nil {
		t.Fatal(err)
	}
	gone := 0
	for _, l := range locs {
		if l.APIAddr != l.Node+":7947" {
			t.Errorf("partition %d on %s: address %q, want %q", l.Partition, l.Node, l.APIAddr, l.Node+":7947")
		}
		if l.Node == "node-0" || l.Node == "node-2" {
			gone++
		}
	}
	if gone == 0 {
		t.Fatal("no partition on a gone node: nothing checked")
	}
}

// checkNoQuorum asks svc (node) the barrier of id and wants, within 5 s, an
// error wrapping ErrNoQuorum and ErrUnavailable that names the shuffle, the
// node, the coordinator node-0 and the count want.
func checkNoQuorum(t *testing.T, svc *service.Service, id, node, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := svc.Barrier(ctx, id)
	if !errors.Is(err, service.ErrNoQuorum) || !errors.Is(err, service.ErrUnavailable) {
		t.Fatalf("barrier of %s on %s: %v, want ErrNoQuorum and ErrUnavailable", id, node, err)
	}
	for _, s := range []string{id, node, "node-0", want, "no quorum"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("barrier error %q does not say %q", err, s)
		}
	}
}

// split partitions c into sides (node indexes): each side sees the others
// fail, as failure detection reports a partition. The driver (puts,
// barrier, reads) then uses side 0 only, from node first.
func (c *simCluster) split(first int, sides ...[]int) {
	names := make([][]string, len(sides))
	c.mu.Lock()
	for s, side := range sides {
		for _, i := range side {
			names[s] = append(names[s], fmt.Sprintf("node-%d", i))
			c.dead[i] = s != 0
		}
	}
	c.asker = first
	c.mu.Unlock()
	c.net.Partition(names...)
}

// putHalf starts 4 nodes, creates f's shuffle on node-0 and puts the first
// half of its tasks; it returns the tasks left.
func putHalf(t *testing.T, f frame) (*simCluster, context.Context, []uint64) {
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second}, simnet.Config{MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	first, rest := half(allTasks(f.tasks), f.tasks/2)
	c.putAll(ctx, f.spec(), f.input(), first)
	return c, ctx, rest
}

// half returns the first n tasks and the others.
func half(tasks []uint64, n int) ([]uint64, []uint64) { return tasks[:n], tasks[n:] }

// TestSimSplitTwoTwo: 4 nodes split 2/2 during the puts, the coordinator
// and another node on one side, the coordinator's first successor and the
// last node on the other. The coordinator's side holds half the members:
// it declares the other two lost and the shuffle seals there in epoch 2,
// every row exactly once. The other side holds half, not a strict
// majority: it never takes over, never moves its epoch, and its barrier
// answers no quorum. The successor is told of the coordinator's failure
// before the other node's (the order failure detection may take), when
// it still sees 3 of 4 members up: the ping before a takeover is what
// finds the fourth unreachable.
func TestSimSplitTwoTwo(t *testing.T) { synctest.Test(t, testSimSplitTwoTwo) }

func testSimSplitTwoTwo(t *testing.T) {
	f := newFrame("split", 12, 7, 6_000, 13)
	c, ctx, rest := putHalf(t, f)
	members := []string{"node-0", "node-1", "node-2", "node-3"}
	next, _, _ := shuffle.CoordinatorOf(f.id, "node-0", members, []string{"node-0"})
	other := []int{c.index[next]}
	for i := 1; i < 4 && len(other) < 2; i++ {
		if i != c.index[next] {
			other = append(other, i)
		}
	}
	mine := slices.DeleteFunc([]int{0, 1, 2, 3}, func(i int) bool { return slices.Contains(other, i) })
	c.split(mine[1], mine, other)
	c.putAll(ctx, f.spec(), f.input(), rest)
	if b := c.settleEpoch(ctx, t, f, f.input(), 2); !b.Sealed || b.Epoch != 2 {
		t.Fatalf("coordinator's side: sealed %v in epoch %d, want sealed in 2", b.Sealed, b.Epoch)
	}
	for _, i := range other {
		in, err := c.svcs[i].Info(f.id)
		if epoch, _ := c.svcs[i].RouteOf(f.id); err != nil || in.Coordinator != "node-0" || in.Phase == service.Sealed || epoch != 0 {
			t.Errorf("node-%d without the coordinator: %s, coordinator %s, epoch %d, %v; want node-0, epoch 0, not sealed", i, in.Phase, in.Coordinator, epoch, err)
		}
	}
	checkNoQuorum(t, c.svcs[other[0]], f.id, next, "up 2 of 4 members")
	c.awaitOwnersLive(t, f.id)
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// TestSimEpochMoveDuringTakeoverPings: the coordinator is cut off; its
// successor sees it fail and pings the members, and while it pings, the
// coordinator comes back and an epoch move of its reaches the successor
// (its membership event saying so still queued behind the pings). The
// successor must not take over on the route it started from: that made a
// second coordinator beside the first (TestNetnsSplitBarrier once ended
// with two coordinators of epoch 2, each refusing the other's members for
// good). It decides again later, when it sees the coordinator back, so the
// members keep following node-0.
func TestSimEpochMoveDuringTakeoverPings(t *testing.T) {
	synctest.Test(t, testSimEpochMoveDuringTakeoverPings)
}

func testSimEpochMoveDuringTakeoverPings(t *testing.T) {
	f := newFrame("moved", 8, 7, 4_000, 9)
	c := startSim(t, 4, service.Config{LossWait: 10 * time.Second}, simnet.Config{MaxDelay: time.Millisecond})
	ctx := testCtx(t)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	members := []string{"node-0", "node-1", "node-2", "node-3"}
	next, _, _ := shuffle.CoordinatorOf(f.id, "node-0", members, []string{"node-0"})
	others := slices.DeleteFunc(slices.Clone(members), func(n string) bool { return n == "node-0" || n == next })
	move := control.Msg{Op: control.OpEpoch, Shuffle: f.id, Node: "node-0", Term: 0, Epoch: 1, Lost: []string{others[0]}}
	var moved atomic.Bool
	defer c.svcs[c.index[next]].SetAfterTakeoverPings(func(node, id string) {
		if node != next || id != f.id || !moved.CompareAndSwap(false, true) {
			return
		}
		c.mend(0)
		body, _ := json.Marshal(move)
		if typ, reply := c.svcs[c.index[next]].Handle(context.Background(), member.Member{Name: "node-0"},
			wire.Frame{Type: wire.TypeControl, Payload: body}); typ == wire.TypeRefused {
			t.Errorf("the coordinator's epoch move refused: %s", reply)
		}
	})()
	c.cutOff(0)
	for deadline := time.Now().Add(10 * time.Second); !moved.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the successor never pinged the members")
		}
	}
	time.Sleep(3 * time.Second) // past the successor's second look (takeoverRecheck)
	for _, n := range append([]string{next}, others...) {
		if in, err := c.svcs[c.index[n]].Info(f.id); err != nil || in.Coordinator != "node-0" {
			t.Errorf("%s: coordinator %s, %v; want node-0, back before the successor took over", n, in.Coordinator, err)
		}
	}
}

// TestSimCoordinatorCutOffAlone: the coordinator is cut off from the 3
// others during the puts. Failure detection reports them to it one at a
// time, so it still counts the ones not reported yet up, but none answers
// its ping: while split it declares nobody lost (no epoch move, no replays
// ordered for nothing), and it never seals. The 3 others, a strict
// majority, take over and seal, every row exactly once. (Once the split
// heals, the old coordinator may still act on the failure reports it had
// queued while a ping waited, in its old term, which the others refuse.)
func TestSimCoordinatorCutOffAlone(t *testing.T) { synctest.Test(t, testSimCoordinatorCutOffAlone) }

func testSimCoordinatorCutOffAlone(t *testing.T) {
	f := newFrame("alone", 12, 7, 6_000, 17)
	c, ctx, rest := putHalf(t, f)
	c.split(3, []int{1, 2, 3}, []int{0})
	if next := c.awaitSuccessor(t, f.id, "node-0"); next == "node-0" {
		t.FailNow()
	}
	c.putAll(ctx, f.spec(), f.input(), rest)
	if b := c.settleEpoch(ctx, t, f, f.input(), 1); !b.Sealed || b.Epoch != 1 {
		t.Fatalf("majority side: sealed %v in epoch %d, want sealed in 1", b.Sealed, b.Epoch)
	}
	checkAlone(t, c.svcs[0], f.id, true)
	c.net.Heal()
	time.Sleep(200 * time.Millisecond)
	checkAlone(t, c.svcs[0], f.id, false)
	c.awaitOwnersLive(t, f.id)
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
}

// checkAlone checks that the coordinator cut off alone did not seal and,
// while split, declared nobody lost (epoch 0, every member live).
func checkAlone(t *testing.T, svc *service.Service, id string, split bool) {
	t.Helper()
	epoch, live := svc.RouteOf(id)
	in, err := svc.Info(id)
	if err != nil || in.Phase == service.Sealed || split && (epoch != 0 || len(live) != 4) {
		t.Errorf("coordinator alone (split %v): epoch %d, live %v, %s, %v; want not sealed (while split: epoch 0, 4 live)", split, epoch, live, in.Phase, err)
	}
}

// TestSimPingAnswers: a ping (before a takeover) is answered, not refused,
// even about a shuffle this node does not hold, and changes nothing.
func TestSimPingAnswers(t *testing.T) { synctest.Test(t, testSimPingAnswers) }

func testSimPingAnswers(t *testing.T) {
	c := startSim(t, 2, service.Config{}, simnet.Config{})
	body, _ := json.Marshal(control.Msg{Op: control.OpPing, Shuffle: "not-here", Node: "node-0"})
	typ, _ := c.svcs[1].Handle(context.Background(), member.Member{Name: "node-0"}, wire.Frame{Type: wire.TypeControl, Payload: body})
	if typ == wire.TypeRefused {
		t.Fatalf("ping refused")
	}
	if _, err := c.svcs[1].Info("not-here"); !errors.Is(err, service.ErrUnknownShuffle) {
		t.Fatalf("after a ping: %v, want ErrUnknownShuffle", err)
	}
}
