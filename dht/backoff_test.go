package dht

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"

	"github.com/shufflenode/shufflenode/wire"
)

// TestRequestIgnoresDialBackoff puts a live member in libp2p's dial
// backoff, as a dial that failed while the cluster was forming does, and
// checks that a request still reaches it: memberlist says who is alive.
// Each of 20 rounds also starts a dial without force at the same moment,
// as the DHT's own are: the request's dial can join it and its backoff
// (this failed about one run in ten under -race before memberStream).
func TestRequestIgnoresDialBackoff(t *testing.T) {
	nodes := ackPair(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id := nodes[1].host.ID()
	sw, ok := nodes[0].host.Network().(*swarm.Swarm)
	if !ok {
		t.Fatalf("network is a %T, not a swarm", nodes[0].host.Network())
	}
	if err := sw.ClosePeer(id); err != nil {
		t.Fatal(err)
	}
	addrs := nodes[0].host.Peerstore().Addrs(id)
	if len(addrs) == 0 {
		t.Fatal("no addresses of the peer")
	}
	// The dials without force below are the test's own: they must end
	// before the nodes close (libp2p's swarm panics on a dial that reaches
	// a transport its Close removed: go-libp2p#1545).
	var dials sync.WaitGroup
	defer dials.Wait()
	for round := range 20 {
		if err := sw.ClosePeer(id); err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			sw.Backoff().AddBackoff(id, a)
		}
		// a dial without force (as the DHT's own are) in flight at once: a
		// forced dial of the same peer joins it, and its backoff
		dials.Go(func() { _ = nodes[0].host.Connect(ctx, peer.AddrInfo{ID: id, Addrs: addrs}) })
		if _, err := nodes[0].Request(ctx, nodes[1].Self().Name, wire.TypeControl, []byte("hi")); err != nil {
			t.Fatalf("round %d: request to a live member in dial backoff: %v", round, err)
		}
	}
}
