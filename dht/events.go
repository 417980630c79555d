package dht

import (
	"sync"

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
	s := &subscriber{out: make(chan Event, max(buf, 0)), wake: make(chan struct{}, 1), done: make(chan struct{})}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		close(s.out)
		return s.out, func() {}
	}
	n.subs[s] = struct{}{}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		s.pump()
	}()
	return s.out, func() { n.unsubscribe(s) }
}

func (n *Node) unsubscribe(s *subscriber) {
	n.mu.Lock()
	delete(n.subs, s)
	n.mu.Unlock()
	s.stop()
}

// publishLocked queues e for every subscriber; n.mu is held. It never blocks.
func (n *Node) publishLocked(e Event) {
	for s := range n.subs {
		s.push(e)
	}
}

func (n *Node) closeSubscribers() {
	n.mu.Lock()
	subs := n.subs
	n.subs = map[*subscriber]struct{}{}
	n.mu.Unlock()
	for s := range subs {
		s.stop()
	}
}

// subscriber is an unbounded FIFO drained by its pump goroutine into out.
type subscriber struct {
	mu       sync.Mutex
	queue    []Event
	wake     chan struct{} // capacity 1: "queue may be non-empty"
	done     chan struct{} // closed by stop
	stopOnce sync.Once
	out      chan Event // closed by pump on exit
}

func (s *subscriber) push(e Event) {
	s.mu.Lock()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) stop() { s.stopOnce.Do(func() { close(s.done) }) }

// pump moves queued events to out until stop; it closes out on exit.
func (s *subscriber) pump() {
	defer close(s.out)
	for {
		e, ok := s.pop()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		select {
		case s.out <- e:
		case <-s.done:
			return
		}
	}
}

func (s *subscriber) pop() (Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return Event{}, false
	}
	e := s.queue[0]
	s.queue[0] = Event{}
	s.queue = s.queue[1:]
	if len(s.queue) == 0 {
		s.queue = nil // let the drained backing array go
	}
	return e, true
}
