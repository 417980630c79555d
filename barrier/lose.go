package barrier

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/recovery"
)

// Lose records that receiver lost is gone and that epoch, with receivers
// survivors, replaces the current epoch. What lost held is gone, so:
//
//   - every done task whose done attempt sent data (Pieces > 0) to lost is
//     done no more: it is returned in replay, ascending, and its next
//     attempt reported done (in the new epoch) becomes its done attempt;
//   - every done task that sent lost nothing no longer waits for lost's
//     commit (which may never come);
//   - tasks not done yet run their next attempts against survivors.
//
// Lose may complete the barrier (Decision.Seal) when the last missing commit
// was lost's and it held no data. The error wraps ErrStaleEpoch,
// ErrUnknownReceiver (lost is not a receiver of the current epoch),
// ErrInvalidConfig (bad survivors) or ErrFailed; on error nothing
// changes. A sealed tracker reopens (Running) if the lost node held data of
// any task, and Seal is decided again once the replays commit; if it held
// none, the seal stands; the caller decides whether a loss after the seal can
// still be repaired (no output read yet) or must fail the shuffle.
func (t *Tracker) Lose(epoch int, lost string, survivors []string) (replay []uint64, d Decision, err error) {
	return t.move(epoch, lost, survivors, recovery.OnLoss)
}

// move is Lose with the effect on each done task that effect decides
// (recovery.OnLoss for a loss, recovery.OnHandOver for a handover).
func (t *Tracker) move(epoch int, lost string, survivors []string, effect func(bool, recovery.Receipt) recovery.LossEffect) (replay []uint64, d Decision, err error) {
	if t.posByName(&t.epochs[len(t.epochs)-1], lost) < 0 {
		return nil, Decision{}, fmt.Errorf("%w: shuffle %s: lost node %s is not a receiver of epoch %d",
			ErrUnknownReceiver, t.shuffle, lost, t.epochs[len(t.epochs)-1].epoch)
	}
	if slices.Contains(survivors, lost) {
		return nil, Decision{}, fmt.Errorf("%w: shuffle %s: lost node %s listed as a survivor", ErrInvalidConfig, t.shuffle, lost)
	}
	sealed := t.phase == Sealed
	if sealed {
		t.phase = Running // reopened: what lost held must be rebuilt
	}
	if err := t.SetReceivers(epoch, survivors); err != nil {
		if sealed {
			t.phase = Sealed
		}
		return nil, Decision{}, err
	}
	r := t.index[lost]
	for task := range t.tasks {
		if !t.tasks[task].done {
			continue
		}
		switch t.loseFrom(uint64(task), r, effect) {
		case recovery.Replay:
			replay = append(replay, uint64(task))
		case recovery.Excused:
			if dd := t.checkComplete(uint64(task)); dd != (Decision{}) {
				d = dd
			}
		}
	}
	if sealed && len(replay) == 0 {
		t.phase = Sealed // lost held no data of any task: the seal stands
	}
	return replay, d, nil
}

// loseFrom applies the loss of receiver r to done task, as effect decides.
func (t *Tracker) loseFrom(task uint64, r int32, effect func(bool, recovery.Receipt) recovery.LossEffect) recovery.LossEffect {
	ts := &t.tasks[task]
	p := t.epochs[ts.epoch].posOf(r)
	e := effect(p >= 0, ts.receipt(int(p)))
	switch e {
	case recovery.Replay:
		t.undo(task, p)
	case recovery.Excused:
		t.commitLost(ts, p)
	}
	return e
}

// receipt is the part of ts's done attempt of the receiver at position p
// of its epoch (p >= 0).
func (ts *taskState) receipt(p int) recovery.Receipt {
	if p < 0 {
		return recovery.Receipt{}
	}
	return recovery.Receipt{Data: ts.sent[p].Pieces > 0, Committed: hasBit(ts.committed, p)}
}

// commitLost counts the lost receiver at position p as committed for ts:
// its commit is no longer awaited.
func (t *Tracker) commitLost(ts *taskState, p int32) {
	setBit(ts.committed, int(p))
	ts.ncommitted++
	t.counts.commits++
}

// wasComplete reports whether task counted as committed everywhere.
func (t *Tracker) wasComplete(task uint64) bool {
	ts := &t.tasks[task]
	return ts.done && int(ts.ncommitted) == len(ts.sent)
}

// undo forgets task's done attempt and its commits: the task counts as not
// done again. Its replay may send only what moved (Undone) when every
// receiver of the done attempt but the one at position lost (-1: none) that
// got data of it reported its commit; otherwise it sends everything.
func (t *Tracker) undo(task uint64, lost int32) {
	ts := &t.tasks[task]
	if t.wasComplete(task) {
		t.counts.committed--
	}
	t.counts.done--
	t.counts.expectedDone -= len(ts.sent)
	t.counts.commits -= int(ts.ncommitted)
	for _, s := range ts.sent {
		t.counts.totals = t.counts.totals.Minus(s)
	}
	var undone int32
	if othersCommitted(ts, lost) {
		undone = ts.epoch + 1
	}
	*ts = taskState{undone: undone}
}

// othersCommitted reports whether a replay of ts's done attempt may send
// only what moved (recovery.PartialReplay): every receiver but the one at
// position lost that got data of it reported its commit.
func othersCommitted(ts *taskState, lost int32) bool {
	return recovery.PartialReplay(len(ts.sent), int(lost), ts.receipt)
}

// Undone returns the epoch of the done attempt of task that a node loss
// took back, if task is not done and has one whose receivers (but the lost
// one) had all reported their commits. Receivers of that epoch that are
// still receivers committed that attempt's data and keep it (exactly once
// per task and partition: the first committed attempt wins), so a replay
// needs to send only what moved to other receivers since then.
func (t *Tracker) Undone(task uint64) (epoch int, ok bool) {
	if task >= uint64(len(t.tasks)) || t.tasks[task].done || t.tasks[task].undone == 0 {
		return 0, false
	}
	return t.epochs[t.tasks[task].undone-1].epoch, true
}

// Pending returns the tasks that have no done attempt, ascending: with no
// put in flight, these are the tasks a client must run (again).
func (t *Tracker) Pending() []uint64 {
	var out []uint64
	for task := range t.tasks {
		if !t.tasks[task].done {
			out = append(out, uint64(task))
		}
	}
	return out
}

// Excuse is Lose for a node whose data every survivor already holds a copy
// of (replication): it moves to epoch with receivers survivors, and no task
// is replayed: every done task stops waiting for lost's commit. It may
// complete the barrier (Decision.Seal). Errors as for Lose.
func (t *Tracker) Excuse(epoch int, lost string, survivors []string) (Decision, error) {
	if t.posByName(&t.epochs[len(t.epochs)-1], lost) < 0 {
		return Decision{}, fmt.Errorf("%w: shuffle %s: lost node %s is not a receiver of epoch %d",
			ErrUnknownReceiver, t.shuffle, lost, t.epochs[len(t.epochs)-1].epoch)
	}
	sealed := t.phase == Sealed
	if sealed {
		t.phase = Running
	}
	if err := t.SetReceivers(epoch, survivors); err != nil {
		if sealed {
			t.phase = Sealed
		}
		return Decision{}, err
	}
	if sealed {
		t.phase = Sealed // nothing was lost: the seal stands
		return Decision{}, nil
	}
	r := t.index[lost]
	var d Decision
	for task := range t.tasks {
		if t.tasks[task].done && t.excuse(uint64(task), r) {
			if dd := t.checkComplete(uint64(task)); dd != (Decision{}) {
				d = dd
			}
		}
	}
	return d, nil
}

// excuse marks receiver r as committed for done task, as
// recovery.OnExcuse decides; false if r was not awaited.
func (t *Tracker) excuse(task uint64, r int32) bool {
	ts := &t.tasks[task]
	p := t.epochs[ts.epoch].posOf(r)
	if recovery.OnExcuse(p >= 0, ts.receipt(int(p))) != recovery.Excused {
		return false
	}
	t.commitLost(ts, p)
	return true
}
