package dht

import "sync/atomic"

// Stats is a snapshot of a node's counters.
type Stats struct {
	// Members is the number of live members, this node included.
	Members int
	// RoutingTablePeers is the number of peers in kad-dht's routing table.
	RoutingTablePeers int
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
}

type counters struct {
	requestsSent, requestFailed, busy, refused atomic.Uint64
	requestsServed, bytesSent, bytesReceived   atomic.Uint64
}

// Stats returns a snapshot of the node's counters.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	members := len(n.members) + 1
	n.mu.Unlock()
	return Stats{
		Members:           members,
		RoutingTablePeers: n.kad.RoutingTable().Size(),
		RequestsSent:      n.stats.requestsSent.Load(),
		RequestsFailed:    n.stats.requestFailed.Load(),
		Busy:              n.stats.busy.Load(),
		Refused:           n.stats.refused.Load(),
		RequestsServed:    n.stats.requestsServed.Load(),
		BytesSent:         n.stats.bytesSent.Load(),
		BytesReceived:     n.stats.bytesReceived.Load(),
	}
}
