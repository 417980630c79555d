package member

import "sync"

// Queue is an unbounded FIFO of events in front of a channel, for a
// subscriber to membership events: Push never blocks (so the goroutines that
// learn of changes never wait for a slow reader, at the cost of memory while
// it lags), and Pump, on a goroutine of its own, moves the events to C in
// order until Stop, then closes C.
type Queue struct {
	// C is where the events come out; closed when Pump returns.
	C chan Event

	mu    sync.Mutex
	queue []Event
	wake  chan struct{} // capacity 1: the queue may have grown
	done  chan struct{} // closed by Stop
	once  sync.Once
}

// NewQueue returns a queue whose channel has capacity buf.
func NewQueue(buf int) *Queue {
	return &Queue{C: make(chan Event, max(buf, 0)), wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// Push queues e; it never blocks.
func (q *Queue) Push(e Event) {
	q.mu.Lock()
	q.queue = append(q.queue, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Stop ends Pump (events still queued are dropped). It is idempotent.
func (q *Queue) Stop() { q.once.Do(func() { close(q.done) }) }

// Pump moves queued events to C until Stop; it closes C when it returns.
func (q *Queue) Pump() {
	defer close(q.C)
	for {
		e, ok := q.next()
		if !ok {
			select {
			case <-q.wake:
				continue
			case <-q.done:
				return
			}
		}
		select {
		case q.C <- e:
		case <-q.done:
			return
		}
	}
}

// next pops the oldest queued event.
func (q *Queue) next() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		return Event{}, false
	}
	e := q.queue[0]
	q.queue[0] = Event{}
	q.queue = q.queue[1:]
	return e, true
}
