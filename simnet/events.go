package simnet

import (
	"sync"

	"github.com/shufflenode/shufflenode/member"
)

// Subscribe returns a channel of the membership events that happen after
// the call, in order, and a function that ends the subscription (it closes
// the channel). Events are never dropped: each subscriber has an unbounded
// queue in front of its channel, whose capacity is buf. The channel is also
// closed when this node is lost or the Network closes.
func (n *Node) Subscribe(buf int) (<-chan member.Event, func()) {
	s := &subscriber{out: make(chan member.Event, max(buf, 0)), wake: make(chan struct{}, 1), done: make(chan struct{})}
	nw := n.net
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed || n.lost {
		close(s.out)
		return s.out, func() {}
	}
	n.subs[s] = struct{}{}
	nw.wg.Go(s.pump)
	return s.out, func() { n.unsubscribe(s) }
}

func (n *Node) unsubscribe(s *subscriber) {
	n.net.mu.Lock()
	delete(n.subs, s)
	n.net.mu.Unlock()
	s.stop()
}

// subscriber is an unbounded FIFO of events that its pump goroutine moves
// to out.
type subscriber struct {
	mu    sync.Mutex
	queue []member.Event
	wake  chan struct{} // capacity 1: the queue may have grown
	done  chan struct{} // closed by stop
	once  sync.Once
	out   chan member.Event // closed by pump when it returns
}

// push queues e; it never blocks.
func (s *subscriber) push(e member.Event) {
	s.mu.Lock()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) stop() { s.once.Do(func() { close(s.done) }) }

func stopAll(subs map[*subscriber]struct{}) {
	for s := range subs {
		s.stop()
	}
}

// pump moves events to out until stop.
func (s *subscriber) pump() {
	defer close(s.out)
	for {
		e, ok := s.next()
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

// next pops the oldest queued event.
func (s *subscriber) next() (member.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return member.Event{}, false
	}
	e := s.queue[0]
	s.queue = s.queue[1:]
	return e, true
}
