package spill

import (
	"slices"
)

// piece is one stored value. Every field is guarded by Store.mu, except that a spiller (holding
// Store.spillMu) reads value while marshalling a piece it has taken out of the queue.
type piece struct {
	key        Key
	size       int64
	value      Value // nil once spilled or released
	part       *partIndex
	prev, next *piece // links of Store.queue
	queued     bool
	onDisk     bool
}

// partIndex indexes the pieces of one (shuffle, partition).
type partIndex struct {
	sh     *shuffleState
	mem    []*piece // pieces put in memory, in arrival order; spilled ones are compacted away lazily
	sorted bool     // mem is in key order
	live   int      // pieces of mem still in memory
	onDisk int      // pieces spilled to disk
	pins   int      // running scans; pinned pieces are not spilled
	keys   keySet   // every key put, in memory or on disk: duplicate detection
	bytes  int64    // the sizes of the pieces put and not removed, in memory or on disk
}

// shuffleState is the store's view of one shuffle.
type shuffleState struct {
	id       string
	reserved int64 // bytes charged by Reserve, held by the caller
	parts    map[uint32]*partIndex
	stats    ShuffleStats
	touched  bool // a spill batch held its pieces: the disk may hold its keys
	dropped  bool
}

func newShuffleState(id string) *shuffleState {
	return &shuffleState{id: id, parts: map[uint32]*partIndex{}}
}

// part returns the index of partition p, creating it.
func (sh *shuffleState) part(p uint32) *partIndex {
	pi := sh.parts[p]
	if pi == nil {
		pi = &partIndex{sh: sh, sorted: true}
		sh.parts[p] = pi
	}
	return pi
}

// add appends p to the partition's in-memory pieces and its key to the partition's keys.
func (pi *partIndex) add(p *piece) {
	pi.keys.add(p.key)
	if n := len(pi.mem); n > 0 && pi.mem[n-1].key.Compare(p.key) > 0 {
		pi.sorted = false
	}
	pi.mem = append(pi.mem, p)
	pi.live++
	pi.bytes += p.size
}

// remove takes p (a piece still in memory) and its key out of the partition.
func (pi *partIndex) remove(p *piece) {
	pi.keys.remove(p.key)
	if i := slices.Index(pi.mem, p); i >= 0 {
		pi.mem = slices.Delete(pi.mem, i, i+1)
		pi.live--
		pi.bytes -= p.size
	}
}

// spilled records that p moved to disk, compacting mem when it is mostly spilled pieces.
func (pi *partIndex) spilled(p *piece) {
	pi.live--
	pi.onDisk++
	if pi.live < len(pi.mem)/2 {
		pi.compact()
	}
}

// compact drops spilled pieces from mem, keeping order.
func (pi *partIndex) compact() {
	pi.mem = slices.DeleteFunc(pi.mem, func(p *piece) bool { return p.onDisk })
}

// snapshot returns the in-memory pieces in key order.
func (pi *partIndex) snapshot() []*piece {
	pi.compact()
	if !pi.sorted {
		slices.SortFunc(pi.mem, func(a, b *piece) int { return a.key.Compare(b.key) })
		pi.sorted = true
	}
	return slices.Clone(pi.mem)
}

// release releases the in-memory values of the partition and returns their bytes and count.
func (pi *partIndex) release() (bytes, pieces int64) {
	for _, p := range pi.mem {
		if p.value != nil {
			p.value.Release()
			p.value = nil
			bytes += p.size
			pieces++
		}
	}
	pi.mem, pi.live = nil, 0
	return bytes, pieces
}

// fifo is an intrusive doubly linked list of pieces in memory, oldest first.
type fifo struct {
	head, tail *piece
}

func (q *fifo) pushBack(p *piece) {
	p.prev, p.next, p.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = p
	} else {
		q.head = p
	}
	q.tail = p
}

func (q *fifo) pushFront(p *piece) {
	p.prev, p.next, p.queued = nil, q.head, true
	if q.head != nil {
		q.head.prev = p
	} else {
		q.tail = p
	}
	q.head = p
}

func (q *fifo) remove(p *piece) {
	if !p.queued {
		return
	}
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		q.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		q.tail = p.prev
	}
	p.prev, p.next, p.queued = nil, nil, false
}
