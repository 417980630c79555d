package barrier

import (
	"fmt"
	"maps"
	"slices"
)

// Tracker is the coordinator's ledger and barrier for one shuffle. It is a
// plain state machine: each method takes one event and returns a Decision;
// it never blocks and does no I/O. It is not safe for concurrent use: one
// goroutine drives it (see doc.go).
type Tracker struct {
	shuffle string
	tasks   []taskState
	names   []string         // receiver index -> node name, every epoch
	index   map[string]int32 // node name -> receiver index
	epochs  []epochSet       // receiver sets, oldest first
	phase   Phase
	err     error
	counts  counters
}

// counters are the running sums behind Progress.
type counters struct {
	done, committed, commits, expectedDone int
	totals                                 Totals
}

// epochSet is the receiver set of one epoch.
type epochSet struct {
	epoch   int
	members []int32 // receiver indexes, in the order given
	pos     []int32 // receiver index -> position in members, -1 when absent
}

// New returns a Tracker for the shuffle cfg describes, in epoch 0. The error
// wraps ErrInvalidConfig.
func New(cfg Config) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{
		shuffle: cfg.Shuffle,
		tasks:   make([]taskState, cfg.Tasks),
		index:   make(map[string]int32, len(cfg.Receivers)),
	}
	t.addEpoch(0, cfg.Receivers)
	return t, nil
}

// TaskDone records that the sender node finished (task, attempt) and sent
// sent[r] to each receiver r of the current epoch (a receiver missing from
// sent got only the end-of-task marker: zero Totals). The first attempt of a
// task reported done becomes the task's done attempt, and the barrier waits
// for every receiver of the current epoch to commit it with equal totals.
// Commits that arrived earlier are checked now. A repeated report of the
// done attempt is a no-op if it agrees and fails the shuffle (ErrMismatch)
// if it does not; a report of another attempt of a done task is recorded
// and changes nothing. sent is not retained.
//
// A non-nil error means the event was rejected (task out of range, unknown
// receiver, ErrSealed, ErrFailed) and nothing changed.
func (t *Tracker) TaskDone(task uint64, attempt uint32, sender string, sent map[string]Totals) (Decision, error) {
	if err := t.check(task); err != nil {
		return Decision{}, err
	}
	ts := &t.tasks[task]
	if ts.done && ts.attempt == attempt {
		return t.repeatDone(task, sender, sent)
	}
	if ts.done {
		return t.laterDone(task, attempt, sender, sent)
	}
	es := &t.epochs[len(t.epochs)-1]
	row, err := t.sentRow(es, task, attempt, sent)
	if err != nil {
		return Decision{}, err
	}
	return t.markDone(task, attempt, sender, row), nil
}

// Committed records that receiver committed (task, attempt) holding held.
// Reports may come before the matching TaskDone; they are kept and checked
// when it arrives. For the task's done attempt held must equal what the
// sender reported for this receiver, or the shuffle fails (ErrMismatch).
// Two reports of the same (receiver, task, attempt) must agree, or the
// shuffle fails (ErrMismatch); an agreeing repeat is a no-op. A commit of an
// attempt that is not the done one is recorded and changes nothing, and so
// is a commit of the done attempt by a node that is not a receiver of the
// task's epoch.
//
// A non-nil error means the event was rejected (task out of range, receiver
// unknown in every epoch, ErrSealed, ErrFailed) and nothing changed.
func (t *Tracker) Committed(receiver string, task uint64, attempt uint32, held Totals) (Decision, error) {
	if err := t.check(task); err != nil {
		return Decision{}, err
	}
	r, ok := t.index[receiver]
	if !ok {
		return Decision{}, fmt.Errorf("%w: shuffle %s task %d attempt %d receiver %s",
			ErrUnknownReceiver, t.shuffle, task, attempt, receiver)
	}
	ts := &t.tasks[task]
	if ts.done && ts.attempt == attempt {
		return t.commitDone(task, r, held), nil
	}
	return t.commitOther(task, attempt, r, held), nil
}

// Phase returns the Tracker's phase.
func (t *Tracker) Phase() Phase { return t.phase }

// Err returns the cause of the failure when the phase is Failed, else nil.
func (t *Tracker) Err() error { return t.err }

// Progress returns a snapshot of the counters.
func (t *Tracker) Progress() Progress {
	cur := len(t.epochs[len(t.epochs)-1].members)
	return Progress{
		Phase:           t.phase,
		Epoch:           t.epochs[len(t.epochs)-1].epoch,
		Tasks:           len(t.tasks),
		TasksDone:       t.counts.done,
		TasksCommitted:  t.counts.committed,
		Commits:         t.counts.commits,
		CommitsExpected: t.counts.expectedDone + (len(t.tasks)-t.counts.done)*cur,
		Totals:          t.counts.totals,
	}
}

// DoneAttempt returns the done attempt of task and the node that ran it;
// ok is false if the task is out of range or not done yet.
func (t *Tracker) DoneAttempt(task uint64) (attempt uint32, sender string, ok bool) {
	if task >= uint64(len(t.tasks)) || !t.tasks[task].done {
		return 0, "", false
	}
	ts := &t.tasks[task]
	return ts.attempt, ts.sender, true
}

// SentTo returns what the done attempt of task sent to receiver, as its
// sender reported. ok is false if the task is not done or receiver is not a
// receiver of the task's epoch. ok with zero Totals means the receiver got
// only the end-of-task marker (no data).
func (t *Tracker) SentTo(task uint64, receiver string) (Totals, bool) {
	if task >= uint64(len(t.tasks)) || !t.tasks[task].done {
		return Totals{}, false
	}
	ts := &t.tasks[task]
	p := t.position(ts.epoch, receiver)
	if p < 0 {
		return Totals{}, false
	}
	return ts.sent[p], true
}

// Fail fails the shuffle for a reason found outside the Tracker (a lost
// coordinator, a receiver's verification after the seal, a cancel). It
// returns Decision{Fail: ...} wrapping err (ErrFailed if err is nil) the
// first time, and a zero Decision if the shuffle had already failed. A
// sealed shuffle can still fail this way.
func (t *Tracker) Fail(err error) Decision {
	if t.phase == Failed {
		return Decision{}
	}
	if err == nil {
		err = ErrFailed
	}
	return t.fail(fmt.Errorf("barrier: shuffle %s: %w", t.shuffle, err))
}

// SetReceivers starts epoch epoch with receiver set receivers (node names):
// every task not yet done when its TaskDone arrives needs commits from
// these receivers. Tasks already done keep the receivers of their epoch.
// A TaskDone is taken to belong to the current epoch, so the caller must
// refuse reports of attempts that ran in an older epoch. The error wraps
// ErrStaleEpoch if epoch is not newer than the current one,
// ErrInvalidConfig for a bad receiver set, or ErrSealed/ErrFailed; on error
// nothing changes.
//
// These are minimal semantics for now; recovery will refine them.
func (t *Tracker) SetReceivers(epoch int, receivers []string) error {
	if err := t.checkPhase(); err != nil {
		return err
	}
	if cur := t.epochs[len(t.epochs)-1].epoch; epoch <= cur {
		return fmt.Errorf("%w: shuffle %s: epoch %d, current %d", ErrStaleEpoch, t.shuffle, epoch, cur)
	}
	if err := validateReceivers(t.shuffle, receivers); err != nil {
		return err
	}
	t.addEpoch(epoch, receivers)
	return nil
}

// Receivers returns the receivers of the current epoch, in the order given.
func (t *Tracker) Receivers() []string {
	es := &t.epochs[len(t.epochs)-1]
	out := make([]string, len(es.members))
	for i, r := range es.members {
		out[i] = t.names[r]
	}
	return out
}

// addEpoch registers receivers (already validated) as the newest epoch.
func (t *Tracker) addEpoch(epoch int, receivers []string) {
	es := epochSet{epoch: epoch, members: make([]int32, len(receivers))}
	for i, name := range receivers {
		r, ok := t.index[name]
		if !ok {
			r = int32(len(t.names))
			t.names = append(t.names, name)
			t.index[name] = r
		}
		es.members[i] = r
	}
	es.pos = slices.Repeat([]int32{-1}, len(t.names))
	for i, r := range es.members {
		es.pos[r] = int32(i)
	}
	t.epochs = append(t.epochs, es)
}

// position returns receiver's position in epoch set e, or -1.
func (t *Tracker) position(e int32, receiver string) int32 {
	return t.posByName(&t.epochs[e], receiver)
}

// posOf returns receiver index r's position in es, or -1.
func (es *epochSet) posOf(r int32) int32 {
	if int(r) >= len(es.pos) {
		return -1
	}
	return es.pos[r]
}

// check rejects events after the seal or failure and tasks out of range.
func (t *Tracker) check(task uint64) error {
	if err := t.checkPhase(); err != nil {
		return err
	}
	if task >= uint64(len(t.tasks)) {
		return fmt.Errorf("%w: shuffle %s task %d, tasks %d", ErrTaskRange, t.shuffle, task, len(t.tasks))
	}
	return nil
}

// checkPhase returns ErrSealed or ErrFailed (with the cause) when not running.
func (t *Tracker) checkPhase() error {
	switch t.phase {
	case Sealed:
		return fmt.Errorf("%w: shuffle %s", ErrSealed, t.shuffle)
	case Failed:
		return fmt.Errorf("%w: %w", ErrFailed, t.err)
	}
	return nil
}

// sentRow turns a sender's report into a row indexed by position in es.
func (t *Tracker) sentRow(es *epochSet, task uint64, attempt uint32, sent map[string]Totals) ([]Totals, error) {
	row := make([]Totals, len(es.members))
	for name, tot := range sent {
		p := t.posByName(es, name)
		if p < 0 {
			return nil, t.unknownInReport(es, task, attempt, sent)
		}
		row[p] = tot
	}
	return row, nil
}

// posByName returns the position of node name in es, or -1.
func (t *Tracker) posByName(es *epochSet, name string) int32 {
	r, ok := t.index[name]
	if !ok {
		return -1
	}
	return es.posOf(r)
}

// unknownInReport names the first (sorted) receiver of sent not in es.
func (t *Tracker) unknownInReport(es *epochSet, task uint64, attempt uint32, sent map[string]Totals) error {
	for _, name := range slices.Sorted(maps.Keys(sent)) {
		if t.posByName(es, name) < 0 {
			return fmt.Errorf("%w: shuffle %s task %d attempt %d receiver %s: not a receiver of epoch %d",
				ErrUnknownReceiver, t.shuffle, task, attempt, name, es.epoch)
		}
	}
	return nil
}

// fail moves to Failed with cause err and returns the Decision saying so.
func (t *Tracker) fail(err error) Decision {
	t.phase = Failed
	t.err = err
	return Decision{Fail: err}
}

// mismatch fails the shuffle because two reports for one receiver disagree.
func (t *Tracker) mismatch(task uint64, attempt uint32, r int32, detail string) Decision {
	return t.fail(fmt.Errorf("%w: shuffle %s task %d attempt %d receiver %s: %s",
		ErrMismatch, t.shuffle, task, attempt, t.names[r], detail))
}
