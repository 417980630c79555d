package dedup

import (
	"fmt"
	"unsafe"
)

// Ledger is one receiver's exactly-once ledger for one shuffle: for each
// (input task, output partition) it records which attempt's data is the one
// to keep and serve. The first attempt of a task to commit a partition
// owns it; later attempts' data for that partition is dropped. It is a
// plain state machine with no I/O, not safe for concurrent use.
//
// Memory: per task a short list of (attempt, set of partitions), with no
// map entry per shard. A task's first commit owns every partition the
// receiver held in its epoch, the same set for every task of that epoch:
// those sets are shared (one copy per distinct set, not per task), so a
// shuffle whose tasks commit once costs O(tasks + partitions) bytes here
// (a few MB for 100,000 x 100,000) where a copy per task cost
// tasks*partitions/8 (1.25 GB). Only a set that differs from the last
// shared one (a replay's, or a commit that added partitions) is a copy of
// its own.
type Ledger struct {
	tasks []taskCommits // by task
	// quick is, by task, the one commit of a task that committed once
	// with a shared set (nearly every task): Visible reads it, 8 bytes a
	// task, where the task's slot is 56 bytes and a cache miss of its own.
	// A read asks Visible of each task with rows in the partition, in task
	// order: at 10,000 x 10,000 about 1,600 tasks of 10,000 a partition,
	// and the slots' misses were 5% of the nodes' CPU.
	quick []quickCommit
	// sets are the shared sets, in the order they were interned; the last
	// is the one a first commit with the same members shares (read only:
	// a commit that grows a shared set copies it first).
	sets [][]uint64
	// firsts holds the owned sets of the tasks' first commits, in blocks of
	// firstsBlock tasks, each task's words after the previous task's. A
	// read asks Visible of every task in turn for one partition; these
	// loads then step through memory at a steady stride, which the CPU
	// prefetches. In an allocation of their own each, they missed the
	// cache (the other 60% of Visible's time in the demo's reads).
	firsts     [][]uint64
	words      int // words of a set that spans every partition
	partitions int
	stats      LedgerStats
}

// quickCommit is a task's one commit, when it owns a shared set: the
// attempt plus one (0: the task committed otherwise, or not yet) and the
// set's index in Ledger.sets.
type quickCommit struct {
	attempt1, set uint32
}

// firstsBlock is the number of tasks whose first sets share a block.
const firstsBlock = 256

// commit is one committed attempt of a task and the partitions it owns.
type commit struct {
	owned   Bitset
	attempt uint32
	shared  bool // owned's words are one of Ledger.sets: never written
	used    bool // (of a task's first) the task committed
}

// taskCommits is the attempts of one task that committed, in commit order.
// The first is held in place: most tasks commit once, and a read asks
// Visible of every task in turn, so a lookup then reads the task's own
// slot and the owned set's word, not a list stored elsewhere first (that
// load missed the cache: 40% of Visible's time in the demo's reads).
type taskCommits struct {
	first commit
	more  []commit // the second and later
}

// count returns how many attempts committed.
func (tc *taskCommits) count() int {
	if !tc.first.used {
		return 0
	}
	return 1 + len(tc.more)
}

// at returns the i-th commit (i < count()).
func (tc *taskCommits) at(i int) *commit {
	if i == 0 {
		return &tc.first
	}
	return &tc.more[i-1]
}

// taskBytes and commitBytes are the approximate sizes of a task's slot
// and of one more commit value in its list.
const (
	taskBytes   = int(unsafe.Sizeof(taskCommits{}) + unsafe.Sizeof(quickCommit{}))
	commitBytes = int(unsafe.Sizeof(commit{}))
)

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
	l := &Ledger{tasks: make([]taskCommits, tasks), quick: make([]quickCommit, tasks), partitions: partitions, words: wordsFor(partitions)}
	l.stats.Tasks = tasks
	l.stats.MemoryBytes = taskBytes*tasks + 64
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
	tc := &l.tasks[task]
	for i := range tc.count() {
		fresh.AndNot(&tc.at(i).owned)
	}
	l.own(task, c, &fresh)
	return c.owned.Clone(), nil
}

// Visible reports whether (task, attempt)'s data for partition is the data
// to keep and serve: that attempt committed and owns the partition.
func (l *Ledger) Visible(task uint64, attempt uint32, partition uint32) bool {
	if task < uint64(len(l.quick)) {
		if q := l.quick[task]; q.attempt1 != 0 {
			return q.attempt1 == attempt+1 && (&Bitset{w: l.sets[q.set]}).Has(int(partition))
		}
	}
	c := l.find(task, attempt)
	return c != nil && c.owned.Has(int(partition))
}

// Committed returns the attempt that owns (task, partition); ok is false if
// no attempt committed it yet (or the task is out of range).
func (l *Ledger) Committed(task uint64, partition uint32) (attempt uint32, ok bool) {
	if task >= uint64(len(l.tasks)) {
		return 0, false
	}
	tc := &l.tasks[task]
	for i := range tc.count() {
		if c := tc.at(i); c.owned.Has(int(partition)) {
			return c.attempt, true
		}
	}
	return 0, false
}

// TaskCommitted reports whether any attempt of task committed here (even
// one that owns no partition).
func (l *Ledger) TaskCommitted(task uint64) bool {
	return task < uint64(len(l.tasks)) && l.tasks[task].first.used
}

// Stats returns a snapshot of the counters.
func (l *Ledger) Stats() LedgerStats { return l.stats }

// find returns the commit of (task, attempt), or nil.
func (l *Ledger) find(task uint64, attempt uint32) *commit {
	if task >= uint64(len(l.tasks)) {
		return nil
	}
	tc := &l.tasks[task]
	for i := range tc.count() {
		if c := tc.at(i); c.attempt == attempt {
			return c
		}
	}
	return nil
}

// entry returns the commit of (task, attempt), adding an empty one if none.
func (l *Ledger) entry(task uint64, attempt uint32) *commit {
	if c := l.find(task, attempt); c != nil {
		return c
	}
	tc := &l.tasks[task]
	l.stats.Attempts++
	if !tc.first.used {
		l.stats.TasksCommitted++
		tc.first = commit{attempt: attempt, used: true}
		return &tc.first
	}
	l.quick[task] = quickCommit{} // a second commit: no longer quick
	l.stats.MemoryBytes -= commitBytes * cap(tc.more)
	tc.more = append(tc.more, commit{attempt: attempt})
	l.stats.MemoryBytes += commitBytes * cap(tc.more)
	return &tc.more[len(tc.more)-1]
}

// own adds fresh (already free of other attempts' partitions) to c, a
// commit of task.
func (l *Ledger) own(task uint64, c *commit, fresh *Bitset) {
	if fresh.Empty() {
		return
	}
	before := c.owned.Count()
	switch {
	case c.shared:
		w := append(l.firstWords(task), c.owned.w...) // grow a private copy, not the shared set
		c.owned, c.shared = Bitset{w: w}, false
		l.quick[task] = quickCommit{}
		c.owned.Or(fresh)
	case c.owned.w != nil:
		bytes := c.owned.Bytes()
		c.owned.Or(fresh) // in place for a first set: fresh spans no more than it can
		l.stats.MemoryBytes += c.owned.Bytes() - bytes
	case c == &l.tasks[task].first:
		set := l.intern(fresh)
		c.owned.w, c.shared = l.sets[set], true
		if len(l.tasks[task].more) == 0 && c.attempt+1 != 0 {
			l.quick[task] = quickCommit{attempt1: c.attempt + 1, set: uint32(set)}
		}
	default:
		c.owned = *fresh // a trimmed copy nobody else holds
		l.stats.MemoryBytes += c.owned.Bytes() - bitsetHeader
	}
	l.stats.PartitionsOwned += c.owned.Count() - before
}

// intern returns the index in sets of a shared set equal to fresh
// (trimmed): the last one, or a new one that becomes the last.
func (l *Ledger) intern(fresh *Bitset) int {
	if n := len(l.sets); n > 0 && (&Bitset{w: l.sets[n-1]}).Equal(fresh) {
		return n - 1
	}
	l.sets = append(l.sets, fresh.clone().w)
	l.stats.MemoryBytes += 8*len(l.sets[len(l.sets)-1]) + 24
	return len(l.sets) - 1
}

// firstWords returns the empty place of task's first set in firsts, with
// room for a set of every partition (and no more: a set that outgrew it
// would move, but none can). A block is allocated when one of its tasks
// first commits.
func (l *Ledger) firstWords(task uint64) []uint64 {
	b, i := int(task)/firstsBlock, int(task)%firstsBlock
	if l.firsts == nil {
		l.firsts = make([][]uint64, (len(l.tasks)+firstsBlock-1)/firstsBlock)
		l.stats.MemoryBytes += 24 * len(l.firsts)
	}
	if l.firsts[b] == nil {
		l.firsts[b] = make([]uint64, firstsBlock*l.words)
		l.stats.MemoryBytes += 8 * len(l.firsts[b])
	}
	lo := i * l.words
	return l.firsts[b][lo : lo : lo+l.words]
}
