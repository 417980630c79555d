package simnet

import (
	"github.com/shufflenode/shufflenode/member"
)

// Subscribe returns a channel of the membership events that happen after
// the call, in order, and a function that ends the subscription (it closes
// the channel). Events are never dropped: each subscriber has an unbounded
// queue in front of its channel, whose capacity is buf. The channel is also
// closed when this node is lost or the Network closes.
func (n *Node) Subscribe(buf int) (<-chan member.Event, func()) {
	q := member.NewQueue(buf)
	nw := n.net
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed || n.lost {
		close(q.C)
		return q.C, func() {}
	}
	n.subs[q] = struct{}{}
	nw.wg.Go(q.Pump)
	return q.C, func() { n.unsubscribe(q) }
}

func (n *Node) unsubscribe(q *member.Queue) {
	n.net.mu.Lock()
	delete(n.subs, q)
	n.net.mu.Unlock()
	q.Stop()
}

func stopAll(subs map[*member.Queue]struct{}) {
	for q := range subs {
		q.Stop()
	}
}
