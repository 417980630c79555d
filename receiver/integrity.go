package receiver

import (
	"fmt"
	"sort"

	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Differs is what a receiver found when a replayed attempt of a dataframe
// task committed: for Partition, which this node holds and which an
// earlier attempt (First) committed here, the replay's rows differ from
// First's (their row sums, see shard.End.Sums). The receiver keeps First's
// rows for the partition, as the ledger says; the coordinator fails the
// shuffle (it must not mix the attempts).
type Differs struct {
	Partition uint32
	First     uint32 // the attempt that committed the partition here
	// FirstRows and Rows are the rows each attempt produced for it; equal
	// counts mean the rows themselves differ.
	FirstRows, Rows uint64
}

// Detail says what d is, for k's replay in shuffle id on node node.
func (d *Differs) Detail(id string, k shuffle.AttemptKey, node string) string {
	return fmt.Sprintf("shuffle %s task %d partition %d: attempt %d produced %d rows where attempt %d produced %d, and their row sums differ (node %s)",
		id, k.Task, d.Partition, k.Attempt, d.Rows, d.First, d.FirstRows, node)
}

// checkReplay compares the row sums of rs (attempt k, which just
// committed and owns owned) with those of the earlier attempts that
// committed the other partitions of held here, and returns the first
// difference, or nil. Arrays carry no row sums (their pieces are compared
// byte for byte as they are placed). Called with the shuffle's lock held.
func (sh *Shuffle) checkReplay(k shuffle.AttemptKey, rs *attempt, held, owned *dedup.Bitset) *Differs {
	if sh.Array != nil {
		return nil
	}
	var d *Differs
	held.ForEach(func(p int) bool {
		if owned.Has(p) {
			return true
		}
		d = sh.compareTo(k, rs, uint32(p))
		return d == nil
	})
	return d
}

// compareTo compares rs's row sum of partition p with that of the attempt
// that committed p here.
func (sh *Shuffle) compareTo(k shuffle.AttemptKey, rs *attempt, p uint32) *Differs {
	first, ok := sh.ledger.Committed(k.Task, p)
	if !ok || first == k.Attempt {
		return nil
	}
	a, ok := sh.firstSum(k.Task, first, p)
	if !ok {
		return nil
	}
	b := sumOf(rs.end.Sums, p)
	if a == b {
		return nil
	}
	return &Differs{Partition: p, First: first, FirstRows: a.Rows, Rows: b.Rows}
}

// firstSum is the row sum of partition p of (task, first), the attempt
// that committed it here: handed over by a draining node, or from its end
// marker. Called with the shuffle's lock held.
func (sh *Shuffle) firstSum(task uint64, first, p uint32) (shard.PartSum, bool) {
	if s, ok := sh.adopted[adoptKey{task, first, p}]; ok {
		return s, true
	}
	fs, ok := sh.recv[shuffle.AttemptKey{Task: task, Attempt: first}]
	if !ok || fs.end == nil {
		return shard.PartSum{}, false
	}
	return sumOf(fs.end.Sums, p), true
}

// sumOf finds partition p in sums (ascending); a partition left out got no
// rows.
func sumOf(sums []shard.PartSum, p uint32) shard.PartSum {
	i := sort.Search(len(sums), func(i int) bool { return sums[i].Partition >= p })
	if i < len(sums) && sums[i].Partition == p {
		return sums[i]
	}
	return shard.PartSum{Partition: p}
}

// replaceWhole makes c's attempt k, a replay found to differ (c.Differs),
// own the task's rows of every partition in held in place of the earlier
// attempts', when the spec asks for it (spec.OnDifferReplayWhole) and k is
// later than the attempt it differs from: reads then serve only k's rows of
// the task here (in memory and spilled alike: both are filtered by the
// ledger). A replay of such a shuffle sends its rows to every partition,
// so k holds rows for all of held. The replaced attempt's bytes stay in
// the store, unread, until the shuffle is dropped, as those of any attempt
// the ledger does not serve. Called with the shuffle's lock held.
func (sh *Shuffle) replaceWhole(k shuffle.AttemptKey, held *dedup.Bitset, c *Commit) {
	if c.Differs == nil || !sh.Spec.ReplayWhole() || k.Attempt <= c.Differs.First {
		return
	}
	if _, err := sh.ledger.Supersede(k.Task, k.Attempt, held); err != nil {
		return // unreachable: k committed just now, in range
	}
	c.Replaced, c.Differs = c.Differs, nil
}
