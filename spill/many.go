package spill

import "fmt"

// Item is one value of a PutMany.
type Item struct {
	Key   Key
	Value Value
}

// PutMany stores the items of one shuffle as a Put of each would, but takes the store's lock
// once for all of them and makes room once: the receiver's way of storing the many small
// pieces of one entry (one per output partition) without paying a Put per piece.
//
// An item whose key is already stored (or repeats an earlier item's) is not taken: dup is
// called with its index and the caller keeps its value. On an error the store took no item
// and the caller keeps every value; the errors are Put's.
func (s *Store) PutMany(shuffle string, items []Item, dup func(i int)) error {
	ps, over, err := s.admitMany(shuffle, items, dup)
	if err != nil || len(ps) == 0 {
		return err
	}
	defer s.ops.Done()
	if over {
		if err := s.makeRoom(shuffle); err != nil {
			if s.unadmitMany(ps) {
				return err
			}
			return nil // dropped concurrently: the store released the values with its shuffle
		}
	}
	if s.enqueueMany(ps) {
		if err := s.makeRoom(shuffle); err != nil {
			s.log.Warn("spill after put failed; pieces stay in memory", "shuffle", shuffle, "err", err)
		}
	}
	return nil
}

// admitMany checks and indexes the items of a PutMany, skipping duplicates. On success with
// pieces the caller must call s.ops.Done.
func (s *Store) admitMany(shuffle string, items []Item, dup func(int)) (ps []*piece, over bool, err error) {
	sizes, total, err := checkItems(shuffle, items)
	if err != nil {
		return nil, false, s.errorf(shuffle, err, "%s", putWhat(items))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, s.errorf(shuffle, ErrClosed, "%s", putWhat(items))
	}
	if used := s.totals.MemoryBytes; s.disk == nil && used+total > s.cfg.MemoryLimit {
		return nil, false, s.errorf(shuffle, ErrMemoryFull, "%s of %d bytes: %d of %d bytes in use",
			putWhat(items), total, used, s.cfg.MemoryLimit)
	}
	sh := s.shuffles[shuffle]
	if sh == nil {
		sh = newShuffleState(shuffle)
		s.shuffles[shuffle] = sh
	}
	ps = make([]*piece, 0, len(items))
	slab := make([]piece, len(items)) // one allocation for the group's index entries
	for i, it := range items {
		pi := sh.part(it.Key.Partition)
		if pi.keys.has(it.Key) {
			dup(i)
			continue
		}
		p := &slab[i]
		*p = piece{key: it.Key, size: sizes[i], value: it.Value, part: pi}
		pi.add(p)
		s.account(sh, p.size, 1)
		ps = append(ps, p)
	}
	if len(ps) > 0 {
		s.ops.Add(1)
	}
	return ps, s.overBudget(), nil
}

// putWhat names what a put stores, for its errors: the key of a single
// piece, else the number of pieces.
func putWhat(items []Item) string {
	if len(items) == 1 {
		return fmt.Sprint(items[0].Key)
	}
	return fmt.Sprintf("put of %d pieces", len(items))
}

// checkItems validates the items of a PutMany and returns their sizes and total.
func checkItems(shuffle string, items []Item) ([]int64, int64, error) {
	sizes := make([]int64, len(items))
	var total int64
	for i, it := range items {
		n, err := checkPut(shuffle, it.Value)
		if err != nil {
			return nil, 0, err
		}
		sizes[i], total = n, total+n
	}
	return sizes, total, nil
}

// unadmitMany undoes admitMany after a failed PutMany. It reports false when the shuffle was
// dropped meanwhile and the values already released.
func (s *Store) unadmitMany(ps []*piece) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		if p.value == nil {
			return false
		}
	}
	for _, p := range ps {
		p.part.remove(p)
		s.account(p.part.sh, -p.size, -1)
		p.value = nil
	}
	return true
}

// enqueueMany makes admitted pieces spillable and reports whether memory is over budget.
func (s *Store) enqueueMany(ps []*piece) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		if p.value != nil && !p.part.sh.dropped {
			s.queue.pushBack(p)
		}
	}
	return s.overBudget()
}
