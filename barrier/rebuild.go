package barrier

import "github.com/shufflenode/shufflenode/recovery"

// A coordinator that takes over from a lost one rebuilds its Tracker from
// what the members tell it (docs/design.md §4.2): it feeds their finished attempts
// and commits epoch by epoch, replaying each loss with Lose or Excuse. What
// a member did not report (it was lost, or its report raced the takeover)
// cannot be trusted: Incomplete finds the done tasks that miss a commit
// that will never come, and Drop makes them pending again, so they replay
// in full (receivers keep the first attempt they committed of each task and
// partition, so nothing is served twice).

// Incomplete returns, ascending, the done tasks whose done attempt ran in
// epoch and is not committed by some receiver of that epoch for which
// awaited is true (recovery.Committed is false).
func (t *Tracker) Incomplete(epoch int, awaited func(node string) bool) []uint64 {
	var out []uint64
	for task := range t.tasks {
		ts := &t.tasks[task]
		if !ts.done || t.epochs[ts.epoch].epoch != epoch {
			continue
		}
		members := t.epochs[ts.epoch].members
		witness := func(p int) recovery.Witness {
			return recovery.Witness{Live: awaited(t.names[members[p]]), Committed: hasBit(ts.committed, p)}
		}
		if !recovery.Committed(len(members), witness) {
			out = append(out, uint64(task))
		}
	}
	return out
}

// Drop forgets the done attempt of task and what its receivers committed of
// it: the task is pending again, and unlike after Lose, its next attempt has
// no epoch to send less against (Undone is false): it sends everything. The
// error wraps ErrTaskRange, ErrSealed or ErrFailed; dropping a task that is
// not done changes nothing.
func (t *Tracker) Drop(task uint64) error {
	if err := t.check(task); err != nil {
		return err
	}
	if !t.tasks[task].done {
		return nil
	}
	t.undo(task, -1)
	t.tasks[task].undone = 0
	return nil
}
