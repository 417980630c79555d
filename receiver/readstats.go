package receiver

import "sync/atomic"

// ReadStats is what this node's reads of a shuffle's output partitions
// handed out: to a DoGet on this node, to a peer that fetched a partition
// from it, or to a node-side op. A partition read twice counts twice.
type ReadStats struct {
	// Rows and Bytes are the rows and Arrow buffer bytes of the batches
	// read (arrays: one row per new chunk, its element bytes).
	Rows, Bytes int64
	// Reads counts the partition reads that completed.
	Reads int64
}

// readCounters counts a shuffle's reads; every method is safe for
// concurrent use.
type readCounters struct{ rows, bytes, reads atomic.Int64 }

// add counts one batch (or chunk) handed to a reader.
func (c *readCounters) add(rows, bytes int64) {
	c.rows.Add(rows)
	c.bytes.Add(bytes)
}

// Reads returns what the reads of sh's partitions on this node handed out.
func (sh *Shuffle) Reads() ReadStats {
	return ReadStats{Rows: sh.out.rows.Load(), Bytes: sh.out.bytes.Load(), Reads: sh.out.reads.Load()}
}
