package dedup

import "fmt"

// Ledger is one receiver's exactly-once ledger for one shuffle: for each
// (input task, output partition) it records which attempt's data is the one
// to keep and serve. The first attempt of a task to commit a partition
// owns it; later attempts' data for that partition is dropped. It is a
// plain state machine with no I/O, not safe for concurrent use.
//
// Memory: per task a short list of (attempt, set of partitions), so about
// tasks*partitions/8 bytes when every task commits once (12.5 MB for
// 10000 x 10000), with no map entry per shard.
type Ledger struct {
	tasks      [][]commit // by task: attempts that committed, in commit order
	partitions int
	stats      LedgerStats
}

// commit is one committed attempt of a task and the partitions it owns.
type commit struct {
	owned   Bitset
	attempt uint32
}

// commitBytes is the approximate size of one commit value in a slice.
const commitBytes = bitsetHeader + 8

// LedgerStats is a snapshot of a Ledger's counters.
type LedgerStats struct {
	// Tasks is the number of input tasks the ledger covers.
	Tasks int
	// TasksCommitted counts tasks with at least one committed attempt.
	TasksCommitted int
	// Attempts counts committed (task, attempt) pairs.
	Attempts int
	// PartitionsOwned counts (task, partition) pairs owned by some attempt.
	PartitionsOwned int
	// MemoryBytes approximates the memory the ledger uses.
	MemoryBytes int
}

// NewLedger returns an empty ledger for tasks input tasks (IDs 0..tasks-1)
// and partitions output partitions (0..partitions-1). Negative counts are
// taken as zero (every Commit then fails with a range error).
func NewLedger(tasks, partitions int) *Ledger {
	tasks, partitions = max(tasks, 0), max(partitions, 0)
	l := &Ledger{tasks: make([][]commit, tasks), partitions: partitions}
	l.stats.Tasks = tasks
	l.stats.MemoryBytes = 24*tasks + 64
	return l
}

// Commit records that (task, attempt) is committed at this receiver for
// partitions: all the output partitions this receiver owned in the
// attempt's epoch, including ones that received no rows. It returns the
// partitions this attempt owns: those not committed for this task by an
// attempt that committed earlier. The caller keeps this attempt's data only
// for the returned partitions and drops the rest. partitions is not retained
// and the result is the caller's.
//
// Commit is idempotent: repeating it for the same (task, attempt) returns
// the same set; a repeat with more partitions adds those not yet owned (a
// union). Errors (ErrTaskRange, ErrPartitionRange) leave the ledger
// unchanged.
func (l *Ledger) Commit(task uint64, attempt uint32, partitions *Bitset) (*Bitset, error) {
	if task >= uint64(len(l.tasks)) {
		return nil, fmt.Errorf("%w: task %d attempt %d, tasks %d", ErrTaskRange, task, attempt, len(l.tasks))
	}
	if n := partitions.Len(); n > l.partitions {
		return nil, fmt.Errorf("%w: task %d attempt %d partition %d, partitions %d",
			ErrPartitionRange, task, attempt, n-1, l.partitions)
	}
	c := l.entry(task, attempt)
	fresh := partitions.clone()
	for i := range l.tasks[task] {
		fresh.AndNot(&l.tasks[task][i].owned)
	}
	l.own(c, &fresh)
	return c.owned.Clone(), nil
}

// Visible reports whether (task, attempt)'s data for partition is the data
// to keep and serve: that attempt committed and owns the partition.
func (l *Ledger) Visible(task uint64, attempt uint32, partition uint32) bool {
	c := l.find(task, attempt)
	return c != nil && c.owned.Has(int(partition))
}

// Committed returns the attempt that owns (task, partition); ok is false if
// no attempt committed it yet (or the task is out of range).
func (l *Ledger) Committed(task uint64, partition uint32) (attempt uint32, ok bool) {
	if task >= uint64(len(l.tasks)) {
		return 0, false
	}
	for i := range l.tasks[task] {
		if c := &l.tasks[task][i]; c.owned.Has(int(partition)) {
			return c.attempt, true
		}
	}
	return 0, false
}

// TaskCommitted reports whether any attempt of task committed here (even
// one that owns no partition).
func (l *Ledger) TaskCommitted(task uint64) bool {
	return task < uint64(len(l.tasks)) && len(l.tasks[task]) > 0
}

// Stats returns a snapshot of the counters.
func (l *Ledger) Stats() LedgerStats { return l.stats }

// find returns the commit of (task, attempt), or nil.
func (l *Ledger) find(task uint64, attempt uint32) *commit {
	if task >= uint64(len(l.tasks)) {
		return nil
	}
	for i := range l.tasks[task] {
		if l.tasks[task][i].attempt == attempt {
			return &l.tasks[task][i]
		}
	}
	return nil
}

// entry returns the commit of (task, attempt), adding an empty one if none.
func (l *Ledger) entry(task uint64, attempt uint32) *commit {
	if c := l.find(task, attempt); c != nil {
		return c
	}
	list := l.tasks[task]
	if len(list) == 0 {
		l.stats.TasksCommitted++
		list = make([]commit, 0, 1)
	}
	l.stats.MemoryBytes -= commitBytes * cap(list)
	list = append(list, commit{attempt: attempt})
	l.stats.MemoryBytes += commitBytes * cap(list)
	l.tasks[task] = list
	l.stats.Attempts++
	return &list[len(list)-1]
}

// own adds fresh (already free of other attempts' partitions) to c.
func (l *Ledger) own(c *commit, fresh *Bitset) {
	if fresh.Empty() {
		return
	}
	before, bytes := c.owned.Count(), c.owned.Bytes()
	if c.owned.w == nil {
		c.owned = *fresh // a trimmed copy nobody else holds
	} else {
		c.owned.Or(fresh)
	}
	l.stats.PartitionsOwned += c.owned.Count() - before
	l.stats.MemoryBytes += c.owned.Bytes() - bytes
}
