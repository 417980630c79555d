package client

import (
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
)

// An array's input task is one old chunk, and each put pays fixed costs
// per chunk: its registration with the coordinator, its end markers and
// their acknowledgement. With small chunks, two puts per node left the
// nodes idle between them, and the messages to each receiver carried one
// chunk's pieces at a time (a receiver places the pieces of the chunks a
// message carries new chunk by new chunk). At (10000, 10000) f8 on 4
// serve processes, 16 puts per node rather than 2 took the rechunk from
// (10, C) to (R, 10) from 89 to 118 MB/s, and from (1, C) to (R, 1) from
// 12 to 18 MB/s (2026-12-02). Run keeps about arrayPutBytes of old chunks
// per node in flight by default, from 2 to maxArrayPutsPerNode puts.
const (
	arrayPutBytes       = 16 << 20
	maxArrayPutsPerNode = 16
)

// workers is how many puts (or streams of several tasks, Job.putsSeveral)
// Run keeps in flight for n tasks: Job.Parallel, else two per node, or for
// an array of small chunks put one to a stream more (see arrayPutBytes).
func (job Job) workers(n int) int {
	if job.Parallel > 0 {
		return job.Parallel
	}
	per := 2
	if !job.putsSeveral(n) {
		per = putsPerNode(job.Spec)
	}
	return per * max(len(job.Nodes), 1)
}

// putsPerNode is the default puts in flight per node for sp.
func putsPerNode(sp *spec.Spec) int {
	if sp.Kind != spec.Array {
		return 2
	}
	b := largestChunkBytes(sp)
	if b <= 0 {
		return 2
	}
	return int(min(max(arrayPutBytes/b, 2), maxArrayPutsPerNode))
}

// largestChunkBytes is the size of sp's largest old chunk, or 0 when that
// is not known (an unknown size, an unknown dtype).
func largestChunkBytes(sp *spec.Spec) int64 {
	dt, err := rechunk.ParseDType(sp.DType)
	if err != nil {
		return 0
	}
	n := int64(dt.ItemSize())
	for _, axis := range sp.OldChunks {
		var longest int64
		for _, c := range axis {
			if c < 0 {
				return 0
			}
			longest = max(longest, c)
		}
		if longest > 0 && n > (1<<62)/longest {
			return 0
		}
		n *= longest
	}
	return n
}
