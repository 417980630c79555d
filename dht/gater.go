package dht

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// gateWait is how long an inbound connection from a peer that is not a
// member yet may wait for memberlist to list it. A joining node learns the
// cluster's members in the push/pull of its join and dials them at once,
// while the member it joined through may still be merging the joiner's
// state: without the wait, that first connection would be refused (and
// dialed again after a backoff).
const gateWait = time.Second

// gate is the libp2p connection gater of a node: it admits only the peer
// IDs of memberlist members (on either side of a connection), so that a
// host outside the cluster can neither open request streams nor use
// kad-dht. Without a gossip key anyone who reaches the gossip port can
// become a member: set GossipKey (and NetworkKey) on untrusted networks.
// Safe for concurrent use; libp2p calls it on its dialing and accepting
// goroutines.
type gate struct {
	mu      sync.Mutex
	peers   map[peer.ID]int // members' peer IDs (a count: a restarted member may briefly have two entries)
	changed chan struct{}   // closed and replaced when a peer is admitted
	closed  bool
}

func newGate() *gate {
	return &gate{peers: map[peer.ID]int{}, changed: make(chan struct{})}
}

// admit lets p connect (a member joined).
func (g *gate) admit(p peer.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.peers[p]++
	close(g.changed)
	g.changed = make(chan struct{})
}

// revoke undoes one admit of p (a member left or failed).
func (g *gate) revoke(p peer.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.peers[p] <= 1 {
		delete(g.peers, p)
		return
	}
	g.peers[p]--
}

// close stops every wait: the node is closing.
func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		close(g.changed)
	}
}

// allowed reports whether p is a member, waiting up to wait for it to
// become one.
func (g *gate) allowed(p peer.ID, wait time.Duration) bool {
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		ok, ch, closed := g.peers[p] > 0, g.changed, g.closed
		g.mu.Unlock()
		if ok || closed || wait <= 0 {
			return ok
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-timeout:
			return false
		}
	}
}

// InterceptPeerDial refuses to dial a peer that is not a member.
func (g *gate) InterceptPeerDial(p peer.ID) bool { return g.allowed(p, 0) }

// InterceptAddrDial admits every address of an admitted peer.
func (g *gate) InterceptAddrDial(peer.ID, ma.Multiaddr) bool { return true }

// InterceptAccept admits every inbound connection to its handshake (the
// peer ID is known only after it; the resource manager bounds how many
// are in progress).
func (g *gate) InterceptAccept(network.ConnMultiaddrs) bool { return true }

// InterceptSecured admits a connection whose authenticated peer is a
// member; an inbound one may wait gateWait for memberlist to list it.
func (g *gate) InterceptSecured(dir network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	if dir == network.DirInbound {
		return g.allowed(p, gateWait)
	}
	return g.allowed(p, 0)
}

// InterceptUpgraded admits every connection that passed InterceptSecured.
func (g *gate) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }
