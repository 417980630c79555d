package dht_test

import (
	"net"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
)

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRestartIsFailThenJoin restarts a member faster than the failure
// detector can notice: the others must still see it fail (its memory is
// gone) and then join again, with the same peer ID (same data directory).
func TestRestartIsFailThenJoin(t *testing.T) {
	var cfg2 dht.Config
	nodes := dhttest.StartCluster(t, 3, func(i int, c *dht.Config) {
		if i == 2 {
			c.GossipAddr = freeAddr(t)
			cfg2 = *c
		}
	}, ackHandler)
	events, unsub := nodes[0].Subscribe(8)
	defer unsub()
	before := nodes[2].Self()
	if err := nodes[2].Close(); err != nil {
		t.Fatal(err)
	}
	cfg2.Join = []string{nodes[0].Self().GossipAddr}
	restarted := startNode(t, cfg2)
	if got := restarted.Self().PeerID; got != before.PeerID {
		t.Fatalf("peer ID %s after restart, was %s", got, before.PeerID)
	}
	for _, want := range []dht.EventKind{dht.MemberFail, dht.MemberJoin} {
		if e := waitEvent(t, events, "node-2", 20*time.Second); e.Kind != want {
			t.Fatalf("event %s for node-2, want %s", e.Kind, want)
		}
	}
	waitMembers(t, nodes[0], 3)
}
