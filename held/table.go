package held

import "sync"

// Table is the shuffles one node holds, of entry type E.
type Table[E any] struct {
	mu     sync.RWMutex
	m      map[string]E
	gone   tombstones
	closed bool
}

// New returns an empty Table.
func New[E any]() *Table[E] { return &Table[E]{m: map[string]E{}} }

// Trace says what the table knows of a shuffle besides its entry.
type Trace struct {
	// Closed: the table is closed (Find then finds nothing).
	Closed bool
	// Gone: a tombstone remembers the shuffle, dropped for Why.
	Gone bool
	Why  string
	// Left: it was dropped because it goes on without this node.
	Left bool
}

// Find returns shuffle id if the table holds it and match (nil: any)
// accepts it, and what its tombstones say of id either way.
func (t *Table[E]) Find(id string, match func(E) bool) (E, bool, Trace) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var zero E
	if t.closed {
		return zero, false, Trace{Closed: true}
	}
	why, gone := t.gone.reason[id]
	tr := Trace{Gone: gone, Why: why, Left: t.gone.left[id]}
	e, ok := t.m[id]
	if !ok || match != nil && !match(e) {
		return zero, false, tr
	}
	return e, true, tr
}

// Gone reports whether a tombstone remembers shuffle id.
func (t *Table[E]) Gone(id string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, gone := t.gone.reason[id]
	return gone
}

// All returns the entries match (nil: any) accepts, in no order.
func (t *Table[E]) All(match func(E) bool) []E {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]E, 0, len(t.m))
	for _, e := range t.m {
		if match == nil || match(e) {
			out = append(out, e)
		}
	}
	return out
}

// IDs returns the IDs of the shuffles held, in no order.
func (t *Table[E]) IDs() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ids := make([]string, 0, len(t.m))
	for id := range t.m {
		ids = append(ids, id)
	}
	return ids
}

// Len is how many shuffles the table holds.
func (t *Table[E]) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

// Add holds e as shuffle id unless the table holds one of that ID
// already, which it returns (exists), or check (nil: none), given how
// many shuffles the table holds, refuses it.
func (t *Table[E]) Add(id string, e E, check func(held int) error) (old E, exists bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.m[id]; ok {
		return old, true, nil
	}
	if check != nil {
		if err := check(len(t.m)); err != nil {
			return old, false, err
		}
	}
	t.m[id] = e
	return e, false, nil
}

// Drop removes shuffle id and returns it, if held. Its tombstone says
// why; left: it goes on without this node. A shuffle that went on
// without this node and is dropped again (it ended) keeps a plain
// tombstone.
func (t *Table[E]) Drop(id, why string, left bool) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	delete(t.m, id)
	switch {
	case ok && left:
		t.gone.addLeft(id, why)
	case ok || t.gone.left[id]:
		t.gone.add(id, why)
		delete(t.gone.left, id)
	}
	return e, ok
}

// Forget removes shuffle id without a tombstone, as if it had never been
// held.
func (t *Table[E]) Forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}

// Close closes the table and reports whether this call closed it.
func (t *Table[E]) Close() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.closed = true
	return true
}

// IfOpen runs fn, unless the table is closed, and reports whether it ran.
// Close waits for fn to return: work that fn starts (a goroutine added to
// a WaitGroup) is started before Close returns, or not at all.
func (t *Table[E]) IfOpen(fn func()) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return false
	}
	fn()
	return true
}
