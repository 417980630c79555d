package spill

// Reserve charges n bytes that the caller holds outside the store for shuffle against the
// memory budget, if they fit without spilling anything and reservations of every shuffle stay
// within half the budget (reserved bytes cannot spill: the other half is left for pieces,
// which can); it reports whether it charged them.
// The receiver uses it for an array chunk it assembles as the pieces arrive: a caller that
// cannot reserve keeps its data as pieces, which the store can spill. Reserved bytes count
// as the shuffle's memory (MemoryBytes, not MemoryPieces) until Unreserve or until
// DropShuffle forgets the shuffle.
func (s *Store) Reserve(shuffle string, n int64) bool {
	if n < 0 || checkShuffleID(shuffle) != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.totals.MemoryBytes+n > s.cfg.MemoryLimit || s.reserved+n > s.cfg.MemoryLimit/2 {
		return false
	}
	s.reserveLocked(shuffle, n)
	return true
}

// reserveLocked charges n reserved bytes to shuffle; s.mu is held.
func (s *Store) reserveLocked(shuffle string, n int64) {
	sh := s.shuffles[shuffle]
	if sh == nil {
		sh = newShuffleState(shuffle)
		s.shuffles[shuffle] = sh
	}
	sh.reserved += n
	s.reserved += n
	s.account(sh, n, 0)
}

// Unreserve gives back n bytes of an earlier Reserve for shuffle. After DropShuffle (which
// gives back all of them) it does nothing.
func (s *Store) Unreserve(shuffle string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shuffles[shuffle]
	if sh == nil {
		return
	}
	n = min(n, sh.reserved)
	sh.reserved -= n
	s.reserved -= n
	s.account(sh, -n, 0)
}

// Charge is Reserve without the check: it charges n bytes for shuffle even
// past the budget (a caller's buffers grew by more than it reserved). The
// next Put then spills pieces to make room. It follows a Reserve for the
// same shuffle: if the shuffle is not known (DropShuffle forgot it since),
// it charges nothing.
func (s *Store) Charge(shuffle string, n int64) {
	if n <= 0 || checkShuffleID(shuffle) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.shuffles[shuffle] != nil {
		s.reserveLocked(shuffle, n)
	}
}

// MemoryLimit is the store's memory budget in bytes.
func (s *Store) MemoryLimit() int64 { return s.cfg.MemoryLimit }
