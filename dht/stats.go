package dht

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Stats is a snapshot of a node's counters.
type Stats struct {
	// Members is the number of live members, this node included.
	Members int
	// RoutingTablePeers is the number of peers in kad-dht's routing table.
	RoutingTablePeers int
	// Rejoins counts the times this node contacted its seeds again because
	// some were not live members (Config.RejoinInterval).
	Rejoins uint64
	// PeerStats are the totals over every peer.
	PeerStats
	// Peers are the counters of each member this node exchanged requests
	// with, by member name ("" for a stream from a peer not in the member
	// list), including members that left since.
	Peers map[string]PeerStats
}

// PeerStats counts the requests between this node and one peer (or all).
type PeerStats struct {
	// RequestsSent counts requests that got a reply (any type).
	RequestsSent uint64
	// RequestsFailed counts requests that failed in transport.
	RequestsFailed uint64
	// Busy and Refused count Busy and Refused replies received.
	Busy uint64
	// Refused: see Busy.
	Refused uint64
	// RequestsServed counts request frames this node's handler served.
	RequestsServed uint64
	// BytesSent and BytesReceived count request payload bytes.
	BytesSent uint64
	// BytesReceived: see BytesSent.
	BytesReceived uint64
	// BusySent counts Busy replies this node sent because the requests it
	// was reading and handling held MaxInboundBytes (Config).
	BusySent uint64
}

// peerCounters are the live counters behind one PeerStats.
type peerCounters struct {
	requestsSent, requestsFailed, busy, refused atomic.Uint64
	requestsServed, bytesSent, bytesReceived    atomic.Uint64
	busySent                                    atomic.Uint64
}

func (c *peerCounters) snapshot() PeerStats {
	return PeerStats{
		RequestsSent: c.requestsSent.Load(), RequestsFailed: c.requestsFailed.Load(),
		Busy: c.busy.Load(), Refused: c.refused.Load(), RequestsServed: c.requestsServed.Load(),
		BytesSent: c.bytesSent.Load(), BytesReceived: c.bytesReceived.Load(), BusySent: c.busySent.Load(),
	}
}

// counters are a node's totals and per-peer counters. Safe for concurrent
// use.
type counters struct {
	total   peerCounters
	rejoins atomic.Uint64
	mu      sync.Mutex
	peers   map[string]*peerCounters
}

// add applies f to the totals and to peer's counters.
func (c *counters) add(peer string, f func(*peerCounters)) {
	f(&c.total)
	c.mu.Lock()
	p, ok := c.peers[peer]
	if !ok {
		if c.peers == nil {
			c.peers = map[string]*peerCounters{}
		}
		p = &peerCounters{}
		c.peers[peer] = p
	}
	c.mu.Unlock()
	f(p)
}

// perPeer snapshots every peer's counters.
func (c *counters) perPeer() map[string]PeerStats {
	c.mu.Lock()
	peers := maps.Clone(c.peers)
	c.mu.Unlock()
	out := make(map[string]PeerStats, len(peers))
	for name, p := range peers {
		out[name] = p.snapshot()
	}
	return out
}

// Stats returns a snapshot of the node's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	members := len(n.members) + 1
	n.mu.Unlock()
	return Stats{
		Members:           members,
		RoutingTablePeers: n.kad.RoutingTable().Size(),
		Rejoins:           n.stats.rejoins.Load(),
		PeerStats:         n.stats.total.snapshot(),
		Peers:             n.stats.perPeer(),
	}
}
