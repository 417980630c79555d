package simnet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/wire"
)

// echo replies Ack with the request's payload and counts its calls.
type echo struct{ calls atomic.Int64 }

func (e *echo) handle(_ context.Context, _ member.Member, req wire.Frame) (wire.Type, []byte) {
	e.calls.Add(1)
	return wire.TypeAck, req.Payload
}

// newNet builds a network of n echo nodes "n0".."n<n-1>", closed at the end.
func newNet(t *testing.T, cfg simnet.Config, n int) (*simnet.Network, []*simnet.Node, []*echo) {
	t.Helper()
	nw, err := simnet.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	nodes, hs := make([]*simnet.Node, n), make([]*echo, n)
	for i := range n {
		hs[i] = &echo{}
		if nodes[i], err = nw.Add(fmt.Sprintf("n%d", i), hs[i].handle); err != nil {
			t.Fatal(err)
		}
	}
	return nw, nodes, hs
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRequestCopiesPayloads(t *testing.T) {
	nw, err := simnet.New(simnet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nw.Close()
	kept := []byte("reply")
	a, _ := nw.Add("a", nil)
	_, _ = nw.Add("b", func(_ context.Context, from member.Member, req wire.Frame) (wire.Type, []byte) {
		if from.Name != "a" {
			t.Errorf("from %q, want a", from.Name)
		}
		req.Payload[0] = 'X' // the handler's own copy
		return wire.TypeAck, kept
	})
	payload := []byte("hello")
	f, err := a.Request(ctxT(t), "b", wire.TypeControl, payload)
	if err != nil {
		t.Fatal(err)
	}
	kept[0] = 'Y'
	if string(payload) != "hello" || string(f.Payload) != "reply" {
		t.Fatalf("payload %q, reply %q: the network shares buffers", payload, f.Payload)
	}
}

func TestReplyErrors(t *testing.T) {
	nw, _ := simnet.New(simnet.Config{})
	defer nw.Close()
	reply := map[string][]byte{"busy": wire.EncodeBusy(time.Second), "refused": wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseSealed, Reason: "no"})}
	a, _ := nw.Add("a", func(_ context.Context, _ member.Member, req wire.Frame) (wire.Type, []byte) {
		if string(req.Payload) == "busy" {
			return wire.TypeBusy, reply["busy"]
		}
		return wire.TypeRefused, reply["refused"]
	})
	b, _ := nw.Add("b", nil)
	for _, tc := range []struct {
		name string
		from *simnet.Node
		want error
	}{
		{"busy", b, wire.ErrBusy}, {"refused", b, wire.ErrRefused},
		{"busy", a, wire.ErrBusy}, {"refused", a, wire.ErrRefused}, // self requests too
	} {
		f, err := tc.from.Request(ctxT(t), "a", wire.TypeControl, []byte(tc.name))
		if !errors.Is(err, tc.want) || f.Type == wire.TypeAck {
			t.Errorf("%s from %s: frame %s, err %v; want %v with the frame", tc.name, tc.from.Self().Name, f.Type, err, tc.want)
		}
	}
	if _, err := b.Request(ctxT(t), "nobody", wire.TypeControl, nil); !errors.Is(err, simnet.ErrUnknownMember) {
		t.Errorf("request to an unknown node: %v, want ErrUnknownMember", err)
	}
}

// TestDrops checks both losses: before the handler (it never runs) and
// after it (it ran, the caller still sees a transport error).
func TestDrops(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cfg       simnet.Config
		to        int
		wantErr   bool
		wantCalls int64
	}{
		{"request lost", simnet.Config{DropRequest: 1}, 1, true, 0},
		{"reply lost", simnet.Config{DropReply: 1}, 1, true, 1},
		{"self requests never fail", simnet.Config{DropRequest: 1, DropReply: 1}, 0, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, nodes, hs := newNet(t, tc.cfg, 2)
			_, err := nodes[0].Request(ctxT(t), fmt.Sprintf("n%d", tc.to), wire.TypeShards, []byte("x"))
			if tc.wantErr != errors.Is(err, simnet.ErrTransport) || (!tc.wantErr && err != nil) {
				t.Errorf("err %v, want a transport error: %v", err, tc.wantErr)
			}
			if got := hs[tc.to].calls.Load(); got != tc.wantCalls {
				t.Errorf("handler ran %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestFaultyLimitsFaults(t *testing.T) {
	onlyShards := func(_, _ string, t wire.Type) bool { return t == wire.TypeShards }
	_, nodes, _ := newNet(t, simnet.Config{DropRequest: 1, Faulty: onlyShards}, 2)
	if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeControl, nil); err != nil {
		t.Errorf("control frame: %v, want no fault", err)
	}
	if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeShards, nil); !errors.Is(err, simnet.ErrTransport) {
		t.Errorf("shards frame: %v, want ErrTransport", err)
	}
}

// TestDuplicateDelivery: every request delivered twice runs its handler
// twice; the duplicates land after the replies, by the time the bubble's
// goroutines are all idle.
func TestDuplicateDelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		nw, nodes, hs := newNet(t, simnet.Config{Duplicate: 1, MaxDelay: time.Millisecond}, 2)
		for range 10 {
			if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeShards, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Millisecond) // the bubble's clock: past every delivery's delay (MaxDelay)
		synctest.Wait()
		if got := hs[1].calls.Load(); got != 20 {
			t.Errorf("handler ran %d times for 10 requests all duplicated, want 20", got)
		}
		if s := nw.Stats(); s.Duplicates != 10 || s.Delivered != 10 {
			t.Errorf("stats %+v", s)
		}
	})
}

// TestSeedReproducesDecisions: the same seed gives the same losses for
// the same sequence of requests.
func TestSeedReproducesDecisions(t *testing.T) {
	run := func(seed uint64) string {
		_, nodes, _ := newNet(t, simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)), DropRequest: 0.3, DropReply: 0.3}, 2)
		var out bytes.Buffer
		for range 64 {
			_, err := nodes[0].Request(ctxT(t), "n1", wire.TypeShards, nil)
			out.WriteByte("01"[btoi(err == nil)])
		}
		return out.String()
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Errorf("seed 7 gave %s then %s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 both gave %s", a)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCutIsolateHeal(t *testing.T) {
	nw, nodes, _ := newNet(t, simnet.Config{}, 3)
	ok := func(from int, to string) bool {
		_, err := nodes[from].Request(ctxT(t), to, wire.TypeControl, nil)
		if err != nil && !errors.Is(err, simnet.ErrTransport) {
			t.Fatalf("n%d -> %s: %v, want nil or ErrTransport", from, to, err)
		}
		return err == nil
	}
	nw.Cut("n0", "n1")
	if ok(0, "n1") || ok(1, "n0") || !ok(0, "n2") || !ok(0, "n0") {
		t.Error("Cut n0-n1: wrong links down")
	}
	nw.Heal()
	nw.Isolate("n2")
	if !ok(0, "n1") || ok(0, "n2") || ok(2, "n1") || !ok(2, "n2") {
		t.Error("Isolate n2: wrong links down")
	}
	nw.Heal()
	if !ok(2, "n0") {
		t.Error("Heal: n2 still cut off")
	}
	if len(nodes[0].Members()) != 3 {
		t.Error("a partition changed the member list")
	}
}

// next reads one event or fails after a second.
func next(t *testing.T, ch <-chan member.Event) member.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(time.Second):
		t.Fatal("no event")
	}
	return member.Event{}
}

// expectSides checks the events after phase cut n2 off from (or mended it
// with) n0 and n1: in (n0's) sees n2, out (n2's) sees n0 then n1, all of
// kind.
func expectSides(t *testing.T, in, out <-chan member.Event, kind member.EventKind, phase string) {
	t.Helper()
	if e := next(t, in); e.Kind != kind || e.Member.Name != "n2" {
		t.Errorf("n0 after %s: %v %s, want %v n2", phase, e.Kind, e.Member.Name, kind)
	}
	for _, want := range []string{"n0", "n1"} {
		if e := next(t, out); e.Kind != kind || e.Member.Name != want {
			t.Errorf("n2 after %s: %v %s, want %v %s", phase, e.Kind, e.Member.Name, kind, want)
		}
	}
}

func TestMembershipEvents(t *testing.T) {
	nw, nodes, _ := newNet(t, simnet.Config{}, 2)
	events, stop := nodes[0].Subscribe(0)
	defer stop()
	lostEvents, _ := nodes[1].Subscribe(0)
	c, _ := nw.Add("n2", nil)
	if e := next(t, events); e.Kind != member.Joined || e.Member.Name != "n2" {
		t.Errorf("after Add: %v %s", e.Kind, e.Member.Name)
	}
	if err := nw.Kill("n1"); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events); e.Kind != member.Failed || e.Member.Name != "n1" {
		t.Errorf("after Kill: %v %s", e.Kind, e.Member.Name)
	}
	_ = nw.Leave("n2")
	if e := next(t, events); e.Kind != member.Left || e.Member.Name != "n2" {
		t.Errorf("after Leave: %v %s", e.Kind, e.Member.Name)
	}
	for e := range lostEvents { // closed by the Kill
		if e.Kind == member.Joined && e.Member.Name == "n2" {
			continue // n2 joined before the kill: n1 may have seen it
		}
		t.Errorf("the killed node got %v", e)
	}
	if ms := nodes[0].Members(); len(ms) != 1 || ms[0].Name != "n0" {
		t.Errorf("members %v, want n0 alone", ms)
	}
	if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeControl, nil); !errors.Is(err, simnet.ErrUnknownMember) {
		t.Errorf("request to a killed node: %v", err)
	}
	if _, err := c.Request(ctxT(t), "n0", wire.TypeControl, nil); !errors.Is(err, simnet.ErrClosed) {
		t.Errorf("request from a node that left: %v", err)
	}
	if err := nw.Kill("n1"); !errors.Is(err, simnet.ErrUnknownMember) {
		t.Errorf("second Kill: %v", err)
	}
	if _, err := nw.Add("n1", nil); err != nil {
		t.Errorf("re-adding a killed node: %v", err)
	}
}

// TestKillDuringRequest: a handler in flight on a node that dies sees its
// ctx cancelled, and the caller gets a transport error.
func TestKillDuringRequest(t *testing.T) {
	nw, _ := simnet.New(simnet.Config{})
	defer nw.Close()
	started := make(chan struct{})
	a, _ := nw.Add("a", nil)
	_, _ = nw.Add("b", func(ctx context.Context, _ member.Member, _ wire.Frame) (wire.Type, []byte) {
		close(started)
		<-ctx.Done()
		return wire.TypeAck, nil
	})
	go func() { <-started; _ = nw.Kill("b") }()
	if _, err := a.Request(ctxT(t), "b", wire.TypeControl, nil); !errors.Is(err, simnet.ErrTransport) {
		t.Fatalf("request to a node killed meanwhile: %v, want ErrTransport", err)
	}
}

func TestCallerContext(t *testing.T) {
	nw, _ := simnet.New(simnet.Config{})
	release := make(chan struct{})
	a, _ := nw.Add("a", nil)
	_, _ = nw.Add("b", func(context.Context, member.Member, wire.Frame) (wire.Type, []byte) {
		<-release
		return wire.TypeAck, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := a.Request(ctx, "b", wire.TypeControl, nil)
	if !errors.Is(err, simnet.ErrTransport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want ErrTransport and DeadlineExceeded", err)
	}
	close(release)
	nw.Close()
	if err := nw.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := a.Request(context.Background(), "b", wire.TypeControl, nil); !errors.Is(err, simnet.ErrClosed) {
		t.Errorf("request after Close: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  simnet.Config
		ok   bool
	}{
		{"zero", simnet.Config{}, true},
		{"faults", simnet.Config{DropRequest: 0.1, DropReply: 1, Duplicate: 0.5, MaxDelay: time.Millisecond}, true},
		{"probability above 1", simnet.Config{Duplicate: 1.5}, false},
		{"negative probability", simnet.Config{DropReply: -0.1}, false},
		{"negative delay", simnet.Config{MaxDelay: -1}, false},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, simnet.ErrConfig)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestPartitionHeal(t *testing.T) {
	nw, nodes, _ := newNet(t, simnet.Config{}, 3)
	ev0, stop0 := nodes[0].Subscribe(8)
	defer stop0()
	ev1, stop1 := nodes[1].Subscribe(8)
	defer stop1()
	nw.Partition([]string{"n0"}, []string{"n1", "n2"})
	if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeControl, nil); !errors.Is(err, simnet.ErrTransport) {
		t.Errorf("n0 -> n1 while partitioned: %v, want ErrTransport", err)
	}
	if _, err := nodes[1].Request(ctxT(t), "n2", wire.TypeControl, nil); err != nil {
		t.Errorf("n1 -> n2 on one side: %v", err)
	}
	nw.Heal()
	want0 := []string{"fail n1", "fail n2", "join n1", "join n2"}
	want1 := []string{"fail n0", "join n0"}
	for i, c := range []struct {
		ev   <-chan member.Event
		want []string
	}{{ev0, want0}, {ev1, want1}} {
		var got []string
		for range c.want {
			e := <-c.ev
			got = append(got, e.Kind.String()+" "+e.Member.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("n%d got %v, want %v", i, got, c.want)
		}
	}
	if _, err := nodes[0].Request(ctxT(t), "n1", wire.TypeControl, nil); err != nil {
		t.Errorf("n0 -> n1 after Heal: %v", err)
	}
}

// TestPartitionRejoin: a partition cuts the node's links and tells both
// sides the other failed; a rejoin mends them and tells both sides Joined.
func TestPartitionRejoin(t *testing.T) {
	nw, nodes, _ := newNet(t, simnet.Config{}, 3)
	out, stopOut := nodes[2].Subscribe(0)
	defer stopOut()
	in, stopIn := nodes[0].Subscribe(0)
	defer stopIn()
	if err := nw.CutOff("n2"); err != nil {
		t.Fatal(err)
	}
	expectSides(t, in, out, member.Failed, "the partition")
	if _, err := nodes[0].Request(ctxT(t), "n2", wire.TypeControl, nil); !errors.Is(err, simnet.ErrTransport) {
		t.Errorf("request across the partition: %v", err)
	}
	if err := nw.Rejoin("n2"); err != nil {
		t.Fatal(err)
	}
	expectSides(t, in, out, member.Joined, "the rejoin")
	if _, err := nodes[0].Request(ctxT(t), "n2", wire.TypeControl, nil); err != nil {
		t.Errorf("request after the rejoin: %v", err)
	}
	if err := nw.CutOff("n9"); !errors.Is(err, simnet.ErrUnknownMember) {
		t.Errorf("partition of an unknown node: %v", err)
	}
}
