package barrier

import (
	"fmt"
	"slices"
)

// taskState is the coordinator's record of one input task.
type taskState struct {
	sent       []Totals     // done attempt's report, by position in its epoch; nil until done
	committed  []uint64     // bitset by position: receivers that committed the done attempt
	others     []attemptLog // reports of attempts other than the done one (or all, before done)
	sender     string       // node that ran the done attempt
	attempt    uint32       // the done attempt
	epoch      int32        // index into Tracker.epochs of the done attempt
	ncommitted int32        // popcount of committed
	done       bool
	// undone is 1 + the index into Tracker.epochs of the done attempt a
	// loss last undid, 0 if none: its receivers of then that are still
	// receivers keep what they committed of it.
	undone int32
}

// attemptLog keeps the reports of one attempt that is not (yet) the done
// one: the receivers' commits, so they can be checked if it becomes the done
// attempt, and whether its sender reported it done after another attempt won.
type attemptLog struct {
	held     []Totals // by receiver index; grown on demand
	has      []uint64 // bitset by receiver index
	sender   string   // set when the attempt was reported done too late
	attempt  uint32
	reported bool
}

// markDone makes attempt the task's done attempt and checks the commits that
// came before.
func (t *Tracker) markDone(task uint64, attempt uint32, sender string, row []Totals) Decision {
	ts := &t.tasks[task]
	e := int32(len(t.epochs) - 1)
	*ts = taskState{
		sent: row, committed: make([]uint64, words(len(row))), others: ts.others,
		sender: sender, attempt: attempt, epoch: e, done: true, undone: ts.undone,
	}
	t.counts.done++
	t.counts.expectedDone += len(row)
	for _, s := range row {
		t.counts.totals = t.counts.totals.Plus(s)
	}
	log, ok := ts.takeLog(attempt)
	if !ok {
		return t.checkComplete(task)
	}
	for _, r := range t.epochs[e].members {
		if held, ok := log.get(r); ok {
			if d := t.commitDone(task, r, held); d != (Decision{}) {
				return d
			}
		}
	}
	return Decision{}
}

// repeatDone handles a repeated TaskDone of the done attempt: it must agree.
func (t *Tracker) repeatDone(task uint64, sender string, sent map[string]Totals) (Decision, error) {
	ts := &t.tasks[task]
	es := &t.epochs[ts.epoch]
	row, err := t.sentRow(es, task, ts.attempt, sent)
	if err != nil {
		return Decision{}, err
	}
	if sender != ts.sender {
		return t.fail(fmt.Errorf("%w: shuffle %s task %d attempt %d: reported done by %s and by %s",
			ErrMismatch, t.shuffle, task, ts.attempt, ts.sender, sender)), nil
	}
	for p, s := range row {
		if s != ts.sent[p] {
			return t.mismatch(task, ts.attempt, es.members[p],
				fmt.Sprintf("sender %s reported sent %v, then %v", sender, ts.sent[p], s)), nil
		}
	}
	return Decision{}, nil
}

// laterDone records a TaskDone of an attempt other than the task's done one.
func (t *Tracker) laterDone(task uint64, attempt uint32, sender string, sent map[string]Totals) (Decision, error) {
	for name := range sent {
		if _, ok := t.index[name]; !ok {
			return Decision{}, fmt.Errorf("%w: shuffle %s task %d attempt %d receiver %s",
				ErrUnknownReceiver, t.shuffle, task, attempt, name)
		}
	}
	log := t.tasks[task].log(attempt)
	log.reported, log.sender = true, sender
	return Decision{}, nil
}

// commitDone records receiver r's commit of the task's done attempt.
func (t *Tracker) commitDone(task uint64, r int32, held Totals) Decision {
	ts := &t.tasks[task]
	p := t.epochs[ts.epoch].posOf(r)
	if p < 0 {
		return Decision{} // not a receiver of the attempt's epoch: nothing to wait for
	}
	if held != ts.sent[p] {
		return t.mismatch(task, ts.attempt, r,
			fmt.Sprintf("sender %s sent %v, receiver holds %v", ts.sender, ts.sent[p], held))
	}
	if hasBit(ts.committed, int(p)) {
		return Decision{}
	}
	setBit(ts.committed, int(p))
	ts.ncommitted++
	t.counts.commits++
	return t.checkComplete(task)
}

// commitOther records a commit of an attempt that is not the done one.
func (t *Tracker) commitOther(task uint64, attempt uint32, r int32, held Totals) Decision {
	log := t.tasks[task].log(attempt)
	if prev, ok := log.get(r); ok {
		if prev != held {
			return t.mismatch(task, attempt, r,
				fmt.Sprintf("receiver reported holding %v, then %v", prev, held))
		}
		return Decision{}
	}
	log.put(r, held, len(t.names))
	return Decision{}
}

// checkComplete counts task as committed when its last receiver committed,
// and seals the shuffle when it was the last task.
func (t *Tracker) checkComplete(task uint64) Decision {
	ts := &t.tasks[task]
	if int(ts.ncommitted) != len(ts.sent) {
		return Decision{}
	}
	t.counts.committed++
	if t.counts.committed < len(t.tasks) {
		return Decision{}
	}
	t.phase = Sealed
	return Decision{Seal: true}
}

// log returns the log of attempt, adding one if there is none.
func (ts *taskState) log(attempt uint32) *attemptLog {
	for i := range ts.others {
		if ts.others[i].attempt == attempt {
			return &ts.others[i]
		}
	}
	ts.others = append(ts.others, attemptLog{attempt: attempt})
	return &ts.others[len(ts.others)-1]
}

// takeLog removes the log of attempt and returns it, if there is one.
func (ts *taskState) takeLog(attempt uint32) (attemptLog, bool) {
	for i := range ts.others {
		if ts.others[i].attempt == attempt {
			log := ts.others[i]
			ts.others = slices.Delete(ts.others, i, i+1)
			if len(ts.others) == 0 {
				ts.others = nil
			}
			return log, true
		}
	}
	return attemptLog{}, false
}

// get returns what receiver r reported holding, if it reported.
func (l *attemptLog) get(r int32) (Totals, bool) {
	if !hasBit(l.has, int(r)) {
		return Totals{}, false
	}
	return l.held[r], true
}

// put stores receiver r's report; n is the number of receiver indexes,
// so the log is allocated once at full size.
func (l *attemptLog) put(r int32, held Totals, n int) {
	if len(l.held) <= int(r) {
		l.held = append(l.held, make([]Totals, n-len(l.held))...)
		l.has = append(l.has, make([]uint64, words(n)-len(l.has))...)
	}
	l.held[r] = held
	setBit(l.has, int(r))
}

// words returns the number of uint64 words holding n bits.
func words(n int) int { return (n + 63) / 64 }

// hasBit reports whether bit i of b is set; bits past the end are clear.
func hasBit(b []uint64, i int) bool {
	return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0
}

// setBit sets bit i of b, which must be long enough.
func setBit(b []uint64, i int) { b[i/64] |= 1 << (i % 64) }
