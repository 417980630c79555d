package splitter

import "sync/atomic"

// Stats is a snapshot of a Splitter's counters.
type Stats struct {
	BufferedBytes int64  // bytes buffered or in flight now
	PeakBytes     int64  // highest BufferedBytes seen
	LimitBytes    int64  // the budget
	Messages      uint64 // batches acknowledged
	Entries       uint64 // entries acknowledged
	BytesSent     uint64 // entry payload bytes acknowledged
	Retries       uint64 // sends retried (busy or transport)
	Failures      uint64 // batches failed for good
}

type counters struct {
	messages, entries, bytes, retries, failures atomic.Uint64
}

func (c *counters) record(b *Batch, err error) {
	if err != nil {
		c.failures.Add(1)
		return
	}
	c.messages.Add(1)
	c.entries.Add(uint64(len(b.Entries)))
	for i := range b.Entries {
		c.bytes.Add(uint64(b.Entries[i].Len()))
	}
}

// Stats returns a snapshot of the splitter's counters.
func (s *Splitter) Stats() Stats {
	used, peak := s.mem.snapshot()
	return Stats{
		BufferedBytes: used, PeakBytes: peak, LimitBytes: s.cfg.MemoryLimit,
		Messages: s.stats.messages.Load(), Entries: s.stats.entries.Load(),
		BytesSent: s.stats.bytes.Load(), Retries: s.stats.retries.Load(),
		Failures: s.stats.failures.Load(),
	}
}
