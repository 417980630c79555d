package simnet

import "sync/atomic"

// Stats counts what a Network did; tests assert that the faults they asked
// for happened.
type Stats struct {
	// Requests is the number of requests accepted for sending (self
	// requests included).
	Requests uint64
	// Delivered is the number of handler calls for requests to other
	// nodes, duplicates excluded.
	Delivered uint64
	// DroppedRequests and DroppedReplies count the drawn losses.
	DroppedRequests, DroppedReplies uint64
	// Duplicates is the number of second deliveries.
	Duplicates uint64
	// CutOff is the number of requests or replies lost to a cut link.
	CutOff uint64
}

type counters struct {
	requests, delivered, droppedRequests, droppedReplies, duplicates, cutOff atomic.Uint64
}

// Stats returns a snapshot of the counters.
func (nw *Network) Stats() Stats {
	c := &nw.stats
	return Stats{
		Requests: c.requests.Load(), Delivered: c.delivered.Load(),
		DroppedRequests: c.droppedRequests.Load(), DroppedReplies: c.droppedReplies.Load(),
		Duplicates: c.duplicates.Load(), CutOff: c.cutOff.Load(),
	}
}
