package dht

import (
	"github.com/shufflenode/shufflenode/member"
)

// EventKind says what happened to a member (member.EventKind).
type EventKind = member.EventKind

// Event kinds, under this package's historic names.
const (
	// MemberJoin: a node joined (or rejoined after a failure or restart).
	MemberJoin = member.Joined
	// MemberLeave: a node left gracefully (Leave).
	MemberLeave = member.Left
	// MemberFail: a node was declared dead by the failure detector, or it
	// restarted (its boot nonce or peer ID changed: its memory is gone); a
	// restart is followed by a MemberJoin for the new process.
	MemberFail = member.Failed
)

// Event is a change of membership (member.Event).
type Event = member.Event

// Subscribe returns a channel of the membership events that happen after
// the call, in order, and a function that ends the subscription. Events are
// never dropped: each subscriber has an unbounded queue in front of its
// channel (buf is the channel's capacity), so memberlist's goroutines never
// block on a slow reader, at the cost of memory while the reader lags. The
// channel is closed by the unsubscribe function or by Close. To track the
// member set without missing a change, Subscribe first, then call Members.
func (n *Node) Subscribe(buf int) (<-chan Event, func()) {
	q := member.NewQueue(buf)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		close(q.C)
		return q.C, func() {}
	}
	n.subs[q] = struct{}{}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		q.Pump()
	}()
	return q.C, func() { n.unsubscribe(q) }
}

func (n *Node) unsubscribe(q *member.Queue) {
	n.mu.Lock()
	delete(n.subs, q)
	n.mu.Unlock()
	q.Stop()
}

// publishLocked queues e for every subscriber; n.mu is held. It never blocks.
func (n *Node) publishLocked(e Event) {
	for q := range n.subs {
		q.Push(e)
	}
}

func (n *Node) closeSubscribers() {
	n.mu.Lock()
	subs := n.subs
	n.subs = map[*member.Queue]struct{}{}
	n.mu.Unlock()
	for q := range subs {
		q.Stop()
	}
}
