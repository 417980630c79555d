package reports

import "sync"

// queue batches values per key: a value waits while the batch of its key
// before it is in flight, then goes with every value that arrived
// meanwhile. One sender per key runs while values wait: add says when the
// caller must start it, take hands it the next batch and says when it is
// to stop. The zero value is ready.
type queue[K comparable, V any] struct {
	mu      sync.Mutex
	pending map[K][]V  // not yet sent
	sending map[K]bool // a sender runs
}

// add queues v for k and reports whether the caller must start k's sender
// (none runs).
func (q *queue[K, V]) add(k K, v V) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending, q.sending = map[K][]V{}, map[K]bool{}
	}
	q.pending[k] = append(q.pending[k], v)
	if q.sending[k] {
		return false
	}
	q.sending[k] = true
	return true
}

// take returns up to limit of k's queued values, in the order they came,
// skipping those keep refuses (nil keeps all); when none is left it
// returns nil and marks k's sender stopped.
func (q *queue[K, V]) take(k K, limit int, keep func(V) bool) []V {
	q.mu.Lock()
	defer q.mu.Unlock()
	vs := q.pending[k]
	var out []V
	for len(vs) > 0 && len(out) < limit {
		if keep == nil || keep(vs[0]) {
			out = append(out, vs[0])
		}
		vs = vs[1:]
	}
	if len(vs) > 0 {
		q.pending[k] = vs
		return out
	}
	delete(q.pending, k)
	if len(out) == 0 {
		delete(q.sending, k)
		return nil
	}
	return out
}

// abandon removes and returns k's queued values and marks k's sender
// stopped (none could be started).
func (q *queue[K, V]) abandon(k K) []V {
	q.mu.Lock()
	defer q.mu.Unlock()
	vs := q.pending[k]
	delete(q.pending, k)
	delete(q.sending, k)
	return vs
}

// busy reports whether values of k wait or are being sent.
func (q *queue[K, V]) busy(k K) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sending[k]
}
