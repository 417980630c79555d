package dedup

import "fmt"

// Supersede gives partitions of task to attempt, which must have
// committed: every other attempt of the task stops owning them (its data
// for them is no longer visible) and attempt owns them, whether an earlier
// attempt committed them or not. A receiver calls it to take a replay's
// rows of a task, for every partition it holds, in place of an earlier
// attempt's, so that all the task's rows it serves come from one attempt
// (spec.OnDifferReplayWhole). It returns the partitions attempt owns.
// partitions is not retained and the result is the caller's. Errors
// (ErrTaskRange, ErrPartitionRange, ErrNotCommitted) leave the ledger
// unchanged.
func (l *Ledger) Supersede(task uint64, attempt uint32, partitions *Bitset) (*Bitset, error) {
	if task >= uint64(len(l.tasks)) {
		return nil, fmt.Errorf("%w: task %d attempt %d, tasks %d", ErrTaskRange, task, attempt, len(l.tasks))
	}
	if n := partitions.Len(); n > l.partitions {
		return nil, fmt.Errorf("%w: task %d attempt %d partition %d, partitions %d",
			ErrPartitionRange, task, attempt, n-1, l.partitions)
	}
	c := l.find(task, attempt)
	if c == nil {
		return nil, fmt.Errorf("%w: task %d attempt %d", ErrNotCommitted, task, attempt)
	}
	tc := &l.tasks[task]
	for i := range tc.count() {
		if o := tc.at(i); o != c {
			l.disown(task, o, partitions)
		}
	}
	fresh := partitions.clone()
	fresh.AndNot(&c.owned)
	l.own(task, c, &fresh)
	return c.owned.Clone(), nil
}

// disown removes partitions from o, a commit of task, copying a shared set
// first (only a task's first commit shares its set, see own).
func (l *Ledger) disown(task uint64, o *commit, partitions *Bitset) {
	before := o.owned.Count()
	if before == 0 {
		return
	}
	if o.shared {
		o.owned, o.shared = Bitset{w: append(l.firstWords(task), o.owned.w...)}, false
	}
	o.owned.AndNot(partitions)
	l.stats.PartitionsOwned -= before - o.owned.Count()
}
