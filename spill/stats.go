package spill

// Stats is a snapshot of a store's counters.
type Stats struct {
	MemoryLimit   int64 // the memory budget
	MemoryBytes   int64 // Value.Size bytes held in memory now
	MemoryPieces  int64 // pieces held in memory now
	SpilledBytes  int64 // bytes written to disk since Open (MarshalSpill output)
	SpilledPieces int64 // pieces written to disk since Open
	DiskBytesLive int64 // spilled bytes of shuffles not dropped (approximate: no badger overhead)
	Spills        int64 // successful spill batches
	SpillErrors   int64 // failed spill batches
	// Shuffles breaks the figures down per live shuffle.
	Shuffles map[string]ShuffleStats
}

// ShuffleStats is the part of Stats that concerns one shuffle.
type ShuffleStats struct {
	MemoryBytes   int64 // Value.Size bytes held in memory now
	MemoryPieces  int64 // pieces held in memory now
	SpilledBytes  int64 // bytes on disk (MarshalSpill output)
	SpilledPieces int64 // pieces on disk
	Partitions    int   // partitions holding at least one piece
}

// Stats returns a snapshot of the store's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.totals
	st.Shuffles = make(map[string]ShuffleStats, len(s.shuffles))
	for id, sh := range s.shuffles {
		ss := sh.stats
		for _, pi := range sh.parts {
			if pi.live+pi.onDisk > 0 {
				ss.Partitions++
			}
		}
		st.DiskBytesLive += ss.SpilledBytes
		st.Shuffles[id] = ss
	}
	return st
}
