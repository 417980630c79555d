package barrier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// scenario is a correct set of reports for one shuffle.
type scenario struct {
	tasks     int
	receivers []string
	events    []event
}

// genScenario builds a correct event set: each task has 1..3 attempts, each
// reported done and committed by every receiver with the totals it sent;
// some reports are duplicated. Later attempts may skip some commits (they
// may never become the done attempt in a correct run, but if they do the
// barrier waits for the missing ones; the model decides).
func genScenario(rng *rand.Rand, single bool) scenario {
	s := scenario{tasks: 1 + rng.IntN(12)}
	for i := range 1 + rng.IntN(5) {
		s.receivers = append(s.receivers, fmt.Sprintf("r%d", i))
	}
	for task := range uint64(s.tasks) {
		attempts := uint32(1 + rng.IntN(3))
		if single {
			attempts = 1
		}
		for a := range attempts {
			s.events = append(s.events, s.attempt(rng, task, a)...)
		}
	}
	for range rng.IntN(len(s.events)/3 + 1) {
		s.events = append(s.events, s.events[rng.IntN(len(s.events))])
	}
	return s
}

// attempt returns the TaskDone and the commits of one attempt.
func (s scenario) attempt(rng *rand.Rand, task uint64, a uint32) []event {
	sent := map[string]Totals{}
	for _, r := range s.receivers {
		if rng.IntN(4) > 0 { // else: marker only, omitted from the map
			sent[r] = Totals{Pieces: rng.Uint64N(5), Rows: rng.Uint64N(100), Bytes: rng.Uint64N(1000), Checksum: rng.Uint64()}
		}
	}
	out := []event{done(task, a, fmt.Sprintf("s%d", rng.IntN(3)), sent)}
	for _, r := range s.receivers {
		out = append(out, commit(r, task, a, sent[r]))
	}
	return out
}

// lastNeeded returns the index in events after which the barrier is
// reached, computed directly: per task, the attempt whose TaskDone comes
// first wins, and the barrier needs that TaskDone and the first Committed of
// every receiver for it. -1 if some needed report is missing.
func lastNeeded(s scenario, events []event) int {
	winner := map[uint64]uint32{}
	need := map[commitKey]int{} // first index of each report; node "" for TaskDone
	for i, e := range events {
		k := commitKey{e.task, e.attempt, e.node}
		if e.done {
			k.node = ""
			if _, ok := winner[e.task]; !ok {
				winner[e.task] = e.attempt
			}
		}
		if _, ok := need[k]; !ok {
			need[k] = i
		}
	}
	last := -1
	for task := range uint64(s.tasks) {
		for _, node := range append([]string{""}, s.receivers...) {
			i, ok := need[commitKey{task, winner[task], node}]
			if !ok {
				return -1
			}
			last = max(last, i)
		}
	}
	return last
}

func TestPropertyPermutationsSealOnceAtLastNeededEvent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		s := genScenario(rng, false)
		rng.Shuffle(len(s.events), func(i, j int) { s.events[i], s.events[j] = s.events[j], s.events[i] })
		want := lastNeeded(s, s.events)
		if want < 0 {
			t.Fatalf("iter %d: generator left out a report", iter)
		}
		tr := mustNew(t, Config{Shuffle: "sh", Tasks: s.tasks, Receivers: s.receivers})
		m := newModel(s.tasks, s.receivers)
		for i, e := range s.events {
			d, err := apply(tr, e)
			if cerr := check(m.step(e), d, err); cerr != nil {
				t.Fatalf("iter %d event %d %v: %v", iter, i, e, cerr)
			}
			if d.Seal != (i == want) || d.Fail != nil || (err != nil && !errors.Is(err, ErrSealed)) {
				t.Fatalf("iter %d event %d %v: %+v %v, seal wanted at %d", iter, i, e, d, err, want)
			}
		}
		if p := tr.Progress(); p.Phase != Sealed || p.TasksCommitted != s.tasks || p.Commits != p.CommitsExpected {
			t.Fatalf("iter %d: progress %+v", iter, p)
		}
	}
}

func TestPropertyCorruptedFailsWithMismatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := range 2000 {
		s := genScenario(rng, true)
		bad := rng.IntN(len(s.events))
		corrupt(rng, s.events, bad)
		rng.Shuffle(len(s.events), func(i, j int) { s.events[i], s.events[j] = s.events[j], s.events[i] })
		tr := mustNew(t, Config{Shuffle: "sh", Tasks: s.tasks, Receivers: s.receivers})
		m := newModel(s.tasks, s.receivers)
		fails := 0
		for i, e := range s.events {
			d, err := apply(tr, e)
			if cerr := check(m.step(e), d, err); cerr != nil {
				t.Fatalf("iter %d event %d %v: %v", iter, i, e, cerr)
			}
			if d.Seal {
				t.Fatalf("iter %d event %d %v: sealed a corrupted shuffle", iter, i, e)
			}
			if d.Fail != nil {
				fails++
			}
			if fails > 0 && d.Fail == nil && !errors.Is(err, ErrFailed) {
				t.Fatalf("iter %d event %d %v: after failure got %+v %v", iter, i, e, d, err)
			}
		}
		if fails != 1 || !errors.Is(tr.Err(), ErrMismatch) {
			t.Fatalf("iter %d: %d failures, err %v", iter, fails, tr.Err())
		}
	}
}

// corrupt changes the totals of events[i] and of every copy of it in the
// same way, so that the report disagrees with its counterpart only.
func corrupt(rng *rand.Rand, events []event, i int) {
	orig, bad := events[i], events[i]
	if orig.done {
		bad.sent = map[string]Totals{}
		for k, v := range orig.sent {
			bad.sent[k] = v
		}
		bad.sent["r0"] = bump(bad.sent["r0"], rng)
	} else {
		bad.held = bump(orig.held, rng)
	}
	for j, e := range events {
		if e.done == orig.done && e.task == orig.task && e.attempt == orig.attempt && e.node == orig.node {
			events[j] = bad
		}
	}
}

// bump changes one field of t by one.
func bump(t Totals, rng *rand.Rand) Totals {
	switch rng.IntN(4) {
	case 0:
		t.Pieces++
	case 1:
		t.Rows++
	case 2:
		t.Bytes++
	default:
		t.Checksum++
	}
	return t
}

// FuzzTracker feeds arbitrary report sequences, decoded from bytes, to a
// Tracker and to the naive model, and checks they agree event by event.
func FuzzTracker(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0})
	f.Add([]byte{1, 1, 0, 2, 1, 2, 0, 2, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0})
	f.Add([]byte{0, 0, 1, 3, 1, 0, 1, 3, 1, 1, 1, 0, 0, 2, 2, 2})
	f.Fuzz(func(t *testing.T, script []byte) {
		receivers := []string{"r0", "r1"}
		tr := mustNew(t, Config{Shuffle: "fz", Tasks: 2, Receivers: receivers})
		m := newModel(2, receivers)
		seals, fails := 0, 0
		for i := 0; i+4 <= len(script); i += 4 {
			e := decodeEvent(script[i : i+4])
			d, err := apply(tr, e)
			if cerr := check(m.step(e), d, err); cerr != nil {
				t.Fatalf("event %d %v: %v", i/4, e, cerr)
			}
			seals += btoi(d.Seal)
			fails += btoi(d.Fail != nil)
		}
		if seals > 1 || fails > 1 || seals+fails > 1 || tr.Phase() != m.phase {
			t.Fatalf("seals %d fails %d phase %v model %v", seals, fails, tr.Phase(), m.phase)
		}
	})
}

// decodeEvent turns 4 bytes into a report over tasks 0..2 (2 is out of
// range), attempts 0..1, receivers r0, r1, r2 (r2 unknown) and a few totals.
func decodeEvent(b []byte) event {
	vals := []Totals{{}, tA, tB}
	task, attempt := uint64(b[1]%3), uint32(b[2]%2)
	if b[0]%2 == 0 {
		sent := map[string]Totals{"r0": vals[b[3]%3], "r1": vals[b[3]/3%3]}
		if b[3]/9%4 == 3 {
			sent["r2"] = tA
		}
		return done(task, attempt, fmt.Sprintf("s%d", b[0]/2%2), sent)
	}
	return commit(fmt.Sprintf("r%d", b[3]/3%3), task, attempt, vals[b[3]%3])
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
