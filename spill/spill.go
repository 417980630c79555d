package spill

import (
	"fmt"
	"slices"
	"strings"
)

// batch is a set of pieces taken out of the queue to be spilled together.
type batch struct {
	pieces []*piece // in queue order: a failed spill puts them back in it
	bytes  int64    // Value.Size bytes
	sorted []*piece // pieces by shuffle and Key, as the groups hold them (set by entries)
	disk   []int64  // MarshalSpill bytes of sorted[i]
}

// makeRoom spills until memory is within budget or nothing is left to spill (pieces being
// put or scanned are not spillable, so the budget may be exceeded by those). Puts that need
// room queue here one spill at a time: back-pressure.
func (s *Store) makeRoom(shuffle string) error {
	if s.disk == nil {
		return nil
	}
	for {
		done, err := s.spillOnce(shuffle)
		if err != nil || done {
			return err
		}
	}
}

// spillOnce writes one batch to disk. done reports that nothing needed or could be spilled.
func (s *Store) spillOnce(shuffle string) (done bool, err error) {
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	b := s.pickBatch()
	if b == nil {
		return true, nil
	}
	sentinel := ErrMarshal
	entries, err := b.entries()
	if err == nil {
		sentinel = ErrDisk
		err = s.disk.WriteBatch(entries)
	}
	s.finishBatch(b, entries, err)
	if err != nil {
		return false, s.spillError(shuffle, b, sentinel, err)
	}
	return false, nil
}

// pickBatch takes the oldest unpinned pieces out of the queue: at least SpillChunk bytes, or
// as much as memory is over budget if that is more. It returns nil when within budget.
func (s *Store) pickBatch() *batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	over := s.totals.MemoryBytes - s.cfg.MemoryLimit
	if over <= 0 {
		return nil
	}
	want := max(over, s.cfg.SpillChunk)
	b := &batch{}
	for p := s.queue.head; p != nil && b.bytes < want; {
		next := p.next
		if p.part.pins == 0 {
			s.queue.remove(p)
			b.pieces = append(b.pieces, p)
			b.bytes += p.size
		}
		p = next
	}
	if len(b.pieces) == 0 {
		return nil
	}
	return b
}

// entries marshals the batch into groups: one disk entry per run of a (shuffle,
// partition)'s pieces in Key order, of about maxGroupBytes at most. The pieces are out of the
// queue and DropShuffle waits for spillMu, so their values stay valid without holding mu.
func (b *batch) entries() ([]Entry, error) {
	b.sorted = slices.Clone(b.pieces)
	slices.SortFunc(b.sorted, comparePieces)
	b.disk = make([]int64, len(b.sorted))
	var es []Entry
	for i := 0; i < len(b.sorted); {
		end, est := b.groupEnd(i)
		e, err := b.group(i, end, est)
		if err != nil {
			return nil, err
		}
		es, i = append(es, e), end
	}
	return es, nil
}

// comparePieces orders pieces by shuffle ID, then Key.
func comparePieces(a, b *piece) int {
	if c := strings.Compare(a.part.sh.id, b.part.sh.id); c != 0 {
		return c
	}
	return a.key.Compare(b.key)
}

// groupEnd returns the end of the group that starts at sorted[i] and its size estimated from
// Value.Size: the group ends at the next partition or once the estimate reaches
// maxGroupBytes.
func (b *batch) groupEnd(i int) (end int, est int64) {
	part := b.sorted[i].part
	for end = i; end < len(b.sorted) && b.sorted[end].part == part && est < maxGroupBytes; end++ {
		est += b.sorted[end].size + groupHeaderLen
	}
	return end, est
}

// group marshals sorted[i:end] into one entry.
func (b *batch) group(i, end int, est int64) (Entry, error) {
	first := b.sorted[i]
	value := make([]byte, 0, est)
	for j := i; j < end; j++ {
		p := b.sorted[j]
		n := len(value)
		var err error
		if value, err = appendSpilled(value, p); err != nil {
			return Entry{}, fmt.Errorf("piece of shuffle %q %v: %w", p.part.sh.id, p.key, err)
		}
		b.disk[j] = int64(len(value) - n - groupHeaderLen)
	}
	return Entry{Key: encodeKey(first.part.sh.id, first.key), Value: value}, nil
}

// appendSpilled appends piece p to a group value, through SpillAppender if its value has it.
func appendSpilled(value []byte, p *piece) ([]byte, error) {
	a, ok := p.value.(SpillAppender)
	if !ok {
		data, err := p.value.MarshalSpill()
		return appendGroupPiece(value, p.key, data), err
	}
	n := len(value)
	value = appendGroupPiece(value, p.key, nil)
	value, err := a.AppendSpill(value)
	if err != nil {
		return value[:n], err
	}
	setGroupPieceLen(value[n:], len(value)-n-groupHeaderLen)
	return value, nil
}

// finishBatch records the outcome of a spill: on success the values are released, on failure
// they go back to the front of the queue in their order.
func (s *Store) finishBatch(b *batch, entries []Entry, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range b.pieces {
		p.part.sh.touched = true
	}
	if err != nil {
		s.totals.SpillErrors++
		for i := len(b.pieces) - 1; i >= 0; i-- {
			s.queue.pushFront(b.pieces[i])
		}
		return
	}
	s.totals.Spills++
	var diskBytes int64
	for i, p := range b.sorted {
		diskBytes += b.disk[i]
		s.spilled(p, b.disk[i])
	}
	s.log.Debug("spilled", "pieces", len(b.pieces), "groups", len(entries), "bytes", diskBytes)
}

// spilled moves the accounting of p from memory to disk and releases its value.
func (s *Store) spilled(p *piece, diskBytes int64) {
	sh := p.part.sh
	p.value.Release()
	p.value = nil
	p.onDisk = true
	p.part.spilled(p)
	s.account(sh, -p.size, -1)
	sh.stats.SpilledBytes += diskBytes
	sh.stats.SpilledPieces++
	s.totals.SpilledBytes += diskBytes
	s.totals.SpilledPieces++
}

// spillError builds the error of a failed spill for the Put of shuffle and logs it.
func (s *Store) spillError(shuffle string, b *batch, sentinel, err error) error {
	owners := b.shuffles()
	s.log.Warn("spill failed; pieces stay in memory", "shuffle", shuffle, "bytes", b.bytes,
		"pieces", len(b.pieces), "owners", owners, "err", err)
	return s.errorf(shuffle, sentinel, "spilling %d pieces (%d bytes) of shuffles %q to make room: %w",
		len(b.pieces), b.bytes, owners, err)
}

// shuffles lists the shuffles whose pieces are in the batch, in first-seen order.
func (b *batch) shuffles() []string {
	var ids []string
	seen := map[string]bool{}
	for _, p := range b.pieces {
		if id := p.part.sh.id; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}
