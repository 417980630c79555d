package barrier

import (
	"errors"
	"fmt"
)

// event is one report fed to a Tracker in tests.
type event struct {
	done    bool // TaskDone when true, Committed otherwise
	task    uint64
	attempt uint32
	node    string            // sender for TaskDone, receiver for Committed
	sent    map[string]Totals // TaskDone only
	held    Totals            // Committed only
}

func (e event) String() string {
	if e.done {
		return fmt.Sprintf("done(t%d a%d by %s %v)", e.task, e.attempt, e.node, e.sent)
	}
	return fmt.Sprintf("committed(%s t%d a%d %v)", e.node, e.task, e.attempt, e.held)
}

// apply feeds e to tr.
func apply(tr *Tracker, e event) (Decision, error) {
	if e.done {
		return tr.TaskDone(e.task, e.attempt, e.sender(), e.sent)
	}
	return tr.Committed(e.node, e.task, e.attempt, e.held)
}

func (e event) sender() string { return e.node }

// model is a naive reference Tracker over maps, for one epoch: it keeps
// every report and recomputes the barrier from scratch after each event.
type model struct {
	tasks     int
	receivers []string
	phase     Phase
	doneAtt   map[uint64]uint32
	doneBy    map[uint64]string
	doneSent  map[uint64]map[string]Totals
	commits   map[commitKey]Totals
}

type commitKey struct {
	task    uint64
	attempt uint32
	node    string
}

// outcome is what the model expects from one event.
type outcome int

const (
	outNone outcome = iota
	outSeal
	outFail     // Decision.Fail wrapping ErrMismatch
	outRejected // an error from the method
)

func newModel(tasks int, receivers []string) *model {
	return &model{tasks: tasks, receivers: receivers, doneAtt: map[uint64]uint32{},
		doneBy: map[uint64]string{}, doneSent: map[uint64]map[string]Totals{},
		commits: map[commitKey]Totals{}}
}

func (m *model) known(node string) bool {
	for _, r := range m.receivers {
		if r == node {
			return true
		}
	}
	return false
}

// step applies e to the model and returns the expected outcome.
func (m *model) step(e event) outcome {
	if m.phase != Running || e.task >= uint64(m.tasks) {
		return outRejected
	}
	if e.done {
		return m.done(e)
	}
	return m.commit(e)
}

func (m *model) done(e event) outcome {
	for n := range e.sent {
		if !m.known(n) {
			return outRejected
		}
	}
	att, isDone := m.doneAtt[e.task]
	switch {
	case !isDone:
		m.doneAtt[e.task], m.doneBy[e.task], m.doneSent[e.task] = e.attempt, e.node, e.sent
	case att != e.attempt:
		return outNone
	case m.doneBy[e.task] != e.node:
		return m.failed()
	default:
		for _, r := range m.receivers {
			if m.doneSent[e.task][r] != e.sent[r] {
				return m.failed()
			}
		}
		return outNone
	}
	return m.evaluate()
}

func (m *model) commit(e event) outcome {
	if !m.known(e.node) {
		return outRejected
	}
	k := commitKey{e.task, e.attempt, e.node}
	if prev, ok := m.commits[k]; ok && prev != e.held {
		return m.failed()
	}
	m.commits[k] = e.held
	return m.evaluate()
}

// evaluate recomputes everything: any mismatch fails, else complete seals.
func (m *model) evaluate() outcome {
	complete := true
	for t := range uint64(m.tasks) {
		att, ok := m.doneAtt[t]
		for _, r := range m.receivers {
			held, has := m.commits[commitKey{t, att, r}]
			if ok && has && held != m.doneSent[t][r] {
				return m.failed()
			}
			complete = complete && ok && has
		}
	}
	if complete {
		m.phase = Sealed
		return outSeal
	}
	return outNone
}

func (m *model) failed() outcome {
	m.phase = Failed
	return outFail
}

// check compares one Tracker result with the model's expected outcome.
func check(want outcome, d Decision, err error) error {
	got := outNone
	switch {
	case err != nil:
		got = outRejected
	case d.Seal && d.Fail != nil:
		return fmt.Errorf("both Seal and Fail in %+v", d)
	case d.Seal:
		got = outSeal
	case d.Fail != nil:
		if !errors.Is(d.Fail, ErrMismatch) {
			return fmt.Errorf("Fail %v does not wrap ErrMismatch", d.Fail)
		}
		got = outFail
	}
	if got != want {
		return fmt.Errorf("outcome %d (decision %+v, err %v), want %d", got, d, err, want)
	}
	return nil
}
