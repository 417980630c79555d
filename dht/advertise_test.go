package dht_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/wire"
)

// TestAdvertiseReplacesBoundAddresses binds node-1's libp2p host on every
// interface and advertises 127.0.0.1: the others see only the advertised
// address (one, whatever the interfaces), its gossip address is the
// advertised host, and requests to it work.
func TestAdvertiseReplacesBoundAddresses(t *testing.T) {
	nodes := dhttest.StartCluster(t, 2, func(i int, c *dht.Config) {
		if i == 1 {
			c.ListenAddrs = []string{"/ip4/0.0.0.0/tcp/0"}
			c.GossipAddr = "0.0.0.0:0"
			c.Advertise = "127.0.0.1"
		}
	}, ackHandler)
	seen := nodes[0].Members()[1]
	if len(seen.Addrs) != 1 || !strings.HasPrefix(seen.Addrs[0], "/ip4/127.0.0.1/tcp/") {
		t.Fatalf("node-0 sees node-1's libp2p addresses %v, want one on 127.0.0.1", seen.Addrs)
	}
	if !strings.HasPrefix(seen.GossipAddr, "127.0.0.1:") {
		t.Fatalf("node-0 sees node-1's gossip address %s, want 127.0.0.1:port", seen.GossipAddr)
	}
	if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeShards, []byte("x")); err != nil {
		t.Fatalf("request to the advertised address: %v", err)
	}
}

// TestAdvertiseAddrsOverride advertises a fixed libp2p address list.
func TestAdvertiseAddrsOverride(t *testing.T) {
	c := dhttest.LocalConfig()
	c.Name, c.AdvertiseAddrs = "n1", []string{"/dns/node-a.example/tcp/7949"}
	n := startNode(t, c)
	if got := n.Self().Addrs; !slices.Equal(got, c.AdvertiseAddrs) {
		t.Fatalf("advertised %v, want %v", got, c.AdvertiseAddrs)
	}
}

// TestRejoinFindsRestartedSeed restarts the seed alone (no seeds of its
// own, as the first node of a cluster starts): the other node, which saw
// it fail, contacts it again and both list each other.
func TestRejoinFindsRestartedSeed(t *testing.T) {
	var seedCfg dht.Config
	nodes := dhttest.StartCluster(t, 2, func(i int, c *dht.Config) {
		c.RejoinInterval = 200 * time.Millisecond
		if i == 0 {
			c.GossipAddr = freeAddr(t)
			seedCfg = *c
		}
	}, ackHandler)
	if err := nodes[0].Close(); err != nil {
		t.Fatal(err)
	}
	waitMembers(t, nodes[1], 1)
	seed := startNode(t, seedCfg)
	waitMembers(t, seed, 2)
	waitMembers(t, nodes[1], 2)
	if nodes[1].Stats().Rejoins == 0 {
		t.Fatal("node-1 lists the seed again without a re-join")
	}
}

// TestNoRejoinWhileSeedsAreMembers checks that a node whose seeds are all
// live members does not contact them again.
func TestNoRejoinWhileSeedsAreMembers(t *testing.T) {
	nodes := dhttest.StartCluster(t, 2, func(_ int, c *dht.Config) { c.RejoinInterval = 50 * time.Millisecond }, ackHandler)
	time.Sleep(300 * time.Millisecond)
	if n := nodes[1].Stats().Rejoins; n != 0 {
		t.Fatalf("%d re-joins while the seed is a member", n)
	}
}
