package spill

import (
	"bytes"
	"container/heap"
)

// merger merges a partition's in-memory pieces (sorted) with its disk groups into one
// Key-ordered stream of callbacks. Disk groups arrive in the order of their first keys, but
// their ranges may overlap (each spill writes its own group), so the merger keeps the groups
// that may still hold the next key and emits a key only once no group still to come can sort
// before it.
//
// A key may be stored twice: on disk as a leftover of a spill that failed after part of it
// reached the disk, and in memory or in a later group. Copies hold the same piece; the merger
// emits the first (memory before disk) and skips the others.
type merger struct {
	mem       []*piece
	next      int // index of the first memory piece not yet emitted
	groups    cursorHeap
	fn        func(k Key, mem Value, disk []byte) error
	fnErr     error // first error from fn: stops the merge
	prefixLen int   // length of the shuffle prefix of disk keys
	last      Key   // the last key emitted
	emitted   bool
}

// onDisk is the Disk.Scan callback: one group. Groups still to come hold only keys after
// its first key, so every piece held up to that key is emitted now; the rest of the group is
// copied (the value is valid during the call only) and held until its turn.
func (m *merger) onDisk(key, value []byte) error {
	first, err := decodeTail(key, m.prefixLen)
	if err != nil {
		return err
	}
	g, err := newGroupCursor(first, value)
	if err != nil {
		return err
	}
	heap.Push(&m.groups, g)
	if err := m.emitThrough(first); err != nil {
		return err
	}
	if !g.done {
		g.rest, g.data = bytes.Clone(g.rest), bytes.Clone(g.data)
	}
	return nil
}

// emitThrough emits the pieces held, in memory and in groups, whose keys are at most k.
func (m *merger) emitThrough(k Key) error {
	for {
		mk, fromMem, ok := m.min()
		if !ok || mk.Compare(k) > 0 {
			return nil
		}
		if err := m.emitMin(fromMem); err != nil {
			return err
		}
	}
}

// finish emits everything left after the last group.
func (m *merger) finish() error {
	for {
		_, fromMem, ok := m.min()
		if !ok {
			return nil
		}
		if err := m.emitMin(fromMem); err != nil {
			return err
		}
	}
}

// min returns the smallest key held and whether it is memory's (memory wins ties).
func (m *merger) min() (k Key, fromMem, ok bool) {
	hasMem := m.next < len(m.mem)
	if len(m.groups) == 0 {
		if !hasMem {
			return Key{}, false, false
		}
		return m.mem[m.next].key, true, true
	}
	gk := m.groups[0].key
	if hasMem && m.mem[m.next].key.Compare(gk) <= 0 {
		return m.mem[m.next].key, true, true
	}
	return gk, false, true
}

// emitMin emits the smallest piece held (from memory if fromMem) and advances past it.
func (m *merger) emitMin(fromMem bool) error {
	if fromMem {
		p := m.mem[m.next]
		m.next++
		return m.call(p.key, p.value, nil)
	}
	g := m.groups[0]
	k, data := g.key, g.data
	if g.next() {
		heap.Fix(&m.groups, 0)
	} else {
		heap.Pop(&m.groups)
	}
	return m.call(k, nil, data)
}

// call runs fn for a piece not emitted yet and remembers fn's error.
func (m *merger) call(k Key, mem Value, disk []byte) error {
	if m.emitted && m.last == k {
		return nil // a second copy
	}
	m.last, m.emitted = k, true
	if err := m.fn(k, mem, disk); err != nil {
		m.fnErr = err
		return err
	}
	return nil
}

// cursorHeap is a min-heap of group cursors by current key.
type cursorHeap []*groupCursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return h[i].key.Compare(h[j].key) < 0 }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*groupCursor)) }

func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}
