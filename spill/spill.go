package spill

import "fmt"

// batch is a set of pieces taken out of the queue to be spilled together.
type batch struct {
	pieces []*piece
	bytes  int64 // Value.Size bytes
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

// entries marshals the batch. The pieces are out of the queue and DropShuffle waits for
// spillMu, so their values stay valid without holding mu.
func (b *batch) entries() ([]Entry, error) {
	es := make([]Entry, len(b.pieces))
	for i, p := range b.pieces {
		data, err := p.value.MarshalSpill()
		if err != nil {
			return nil, fmt.Errorf("piece of shuffle %q %v: %w", p.part.sh.id, p.key, err)
		}
		es[i] = Entry{Key: encodeKey(p.part.sh.id, p.key), Value: data}
	}
	return es, nil
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
	for i, p := range b.pieces {
		diskBytes += int64(len(entries[i].Value))
		s.spilled(p, int64(len(entries[i].Value)))
	}
	s.log.Debug("spilled", "pieces", len(b.pieces), "bytes", diskBytes)
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
