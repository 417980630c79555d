package dht

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/p2p/net/swarm"

	"github.com/shufflenode/shufflenode/wire"
)

// TestRequestIgnoresDialBackoff puts a live member in libp2p's dial
// backoff, as a dial that failed while the cluster was forming does, and
// checks that a request still reaches it: memberlist says who is alive.
func TestRequestIgnoresDialBackoff(t *testing.T) {
	nodes := ackPair(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	peer := nodes[1].host.ID()
	sw, ok := nodes[0].host.Network().(*swarm.Swarm)
	if !ok {
		t.Fatalf("network is a %T, not a swarm", nodes[0].host.Network())
	}
	if err := sw.ClosePeer(peer); err != nil {
		t.Fatal(err)
	}
	addrs := nodes[0].host.Peerstore().Addrs(peer)
	if len(addrs) == 0 {
		t.Fatal("no addresses of the peer")
	}
	for _, a := range addrs {
		sw.Backoff().AddBackoff(peer, a)
	}
	if _, err := nodes[0].Request(ctx, nodes[1].Self().Name, wire.TypeControl, []byte("hi")); err != nil {
		t.Fatalf("request to a live member in dial backoff: %v", err)
	}
}
