package dht_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/wire"
)

// ackHandler acknowledges every request with "<self>:<from>".
func ackHandler(i int) dht.Handler {
	return func(_ context.Context, from dht.Member, _ wire.Frame) (wire.Type, []byte) {
		return wire.TypeAck, fmt.Appendf(nil, "node-%d:%s", i, from.Name)
	}
}

func names(ms []dht.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func TestClusterOfFiveForms(t *testing.T) {
	nodes := dhttest.StartCluster(t, 5, func(i int, c *dht.Config) {
		c.APIAddr = fmt.Sprintf("127.0.0.1:%d", 9000+i)
	}, ackHandler)
	want := []string{"node-0", "node-1", "node-2", "node-3", "node-4"}
	for _, nd := range nodes {
		ms := nd.Members()
		if !slices.Equal(names(ms), want) {
			t.Fatalf("%s sees %v, want %v", nd.Self().Name, names(ms), want)
		}
		for i, m := range ms {
			self := nodes[i].Self()
			if m.PeerID != self.PeerID || m.APIAddr != self.APIAddr || m.GossipAddr != self.GossipAddr || len(m.Addrs) == 0 {
				t.Fatalf("%s sees %+v, node says %+v", nd.Self().Name, m, self)
			}
		}
		if s := nd.Stats(); s.RoutingTablePeers != 4 {
			t.Fatalf("%s routing table has %d peers", nd.Self().Name, s.RoutingTablePeers)
		}
	}
}

// waitEvent returns the first event on ch for member name, failing t after
// timeout.
func waitEvent(t *testing.T, ch <-chan dht.Event, name string, timeout time.Duration) dht.Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("event channel closed")
			}
			if e.Member.Name == name {
				return e
			}
		case <-deadline:
			t.Fatalf("no event for %s within %v", name, timeout)
		}
	}
}

func TestMemberGone(t *testing.T) {
	cases := []struct {
		name string
		stop func(*dht.Node) error
		want dht.EventKind
	}{
		{"crash is a failure", (*dht.Node).Close, dht.MemberFail},
		{"leave is a leave", func(n *dht.Node) error { return n.Leave(5 * time.Second) }, dht.MemberLeave},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := dhttest.StartCluster(t, 3, nil, ackHandler)
			var subs []<-chan dht.Event
			for _, nd := range nodes[:2] {
				ch, unsub := nd.Subscribe(0)
				t.Cleanup(unsub)
				subs = append(subs, ch)
			}
			if err := tc.stop(nodes[2]); err != nil {
				t.Fatal(err)
			}
			for i, ch := range subs {
				if e := waitEvent(t, ch, "node-2", 30*time.Second); e.Kind != tc.want {
					t.Fatalf("node-%d got %s for node-2, want %s", i, e.Kind, tc.want)
				}
				if got := names(nodes[i].Members()); slices.Contains(got, "node-2") {
					t.Fatalf("node-%d still lists node-2: %v", i, got)
				}
			}
			_, err := nodes[0].Request(context.Background(), "node-2", wire.TypeControl, nil)
			if !errors.Is(err, dht.ErrUnknownMember) {
				t.Fatalf("request to gone member: %v, want ErrUnknownMember", err)
			}
		})
	}
}

func TestCloseIsIdempotentAndClosesSubscriptions(t *testing.T) {
	nodes := dhttest.StartCluster(t, 1, nil, ackHandler)
	ch, unsub := nodes[0].Subscribe(1)
	defer unsub()
	for range 2 {
		if err := nodes[0].Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := <-ch; ok {
		t.Fatal("subscription not closed by Close")
	}
	if _, err := nodes[0].Request(context.Background(), "node-0", wire.TypeControl, nil); !errors.Is(err, dht.ErrClosed) {
		t.Fatalf("request after close: %v", err)
	}
	if err := nodes[0].Leave(time.Second); !errors.Is(err, dht.ErrClosed) {
		t.Fatalf("leave after close: %v", err)
	}
}

// TestStartNodesJoiningRunningCluster starts one node that joins a running
// cluster, as serve --join does: it must come up, seeing more members than
// it started.
func TestStartNodesJoiningRunningCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := dhttest.StartCluster(t, 2, nil, ackHandler)
	cfg := dhttest.LocalConfig()
	cfg.Name, cfg.Join = "late", []string{first[0].Self().GossipAddr}
	late, err := dht.StartNodes(ctx, []dht.Config{cfg}, ackHandler)
	if err != nil {
		t.Fatalf("a node joining a running cluster did not start: %v", err)
	}
	defer late[0].Close()
	if n := len(late[0].Members()); n != 3 {
		t.Fatalf("joined node sees %d members, want 3", n)
	}
}

// TestLeaveAllAtOnce stops every node of a cluster at once, as a cluster
// shutdown does: each Leave must return, though the last ones have nobody
// left to gossip their broadcasts to. Memberlist alone waits out the
// timeout then, so the timeout here is longer than the test's bound.
func TestLeaveAllAtOnce(t *testing.T) {
	nodes := dhttest.StartCluster(t, 4, nil, ackHandler)
	errs := make(chan error, len(nodes))
	for _, nd := range nodes {
		go func() { errs <- nd.Leave(2 * time.Minute) }()
	}
	deadline := time.After(time.Minute)
	for range nodes {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("a Leave still waits for its broadcast after every other node left")
		}
	}
}
