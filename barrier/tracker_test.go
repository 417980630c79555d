package barrier

import (
	"errors"
	"strings"
	"testing"
)

var (
	tA = Totals{Pieces: 2, Rows: 10, Bytes: 100, Checksum: 7}
	tB = Totals{Pieces: 1, Rows: 5, Bytes: 50, Checksum: 3}
	tX = Totals{Pieces: 2, Rows: 10, Bytes: 101, Checksum: 7} // tA with one byte more
)

func done(task uint64, attempt uint32, sender string, sent map[string]Totals) event {
	return event{done: true, task: task, attempt: attempt, node: sender, sent: sent}
}

func commit(node string, task uint64, attempt uint32, held Totals) event {
	return event{task: task, attempt: attempt, node: node, held: held}
}

// step is one event of a table case and what it must return.
type step struct {
	ev   event
	want outcome
	err  error // sentinel the error (or Decision.Fail) must wrap, if any
}

func TestTrackerEventOrders(t *testing.T) {
	ab := map[string]Totals{"r1": tA, "r2": tB}
	onlyR1 := map[string]Totals{"r1": tA}
	tests := []struct {
		name  string
		tasks int
		steps []step
	}{
		{"in order", 2, []step{
			{ev: done(0, 0, "s", ab)}, {ev: commit("r1", 0, 0, tA)}, {ev: commit("r2", 0, 0, tB)},
			{ev: done(1, 0, "s", ab)}, {ev: commit("r1", 1, 0, tA)},
			{ev: commit("r2", 1, 0, tB), want: outSeal},
		}},
		{"committed before done", 1, []step{
			{ev: commit("r2", 0, 0, tB)}, {ev: commit("r1", 0, 0, tA)},
			{ev: done(0, 0, "s", ab), want: outSeal},
		}},
		{"receiver without data commits zero totals", 1, []step{
			{ev: done(0, 0, "s", onlyR1)}, {ev: commit("r1", 0, 0, tA)},
			{ev: commit("r2", 0, 0, Totals{}), want: outSeal},
		}},
		{"duplicates are idempotent", 1, []step{
			{ev: commit("r1", 0, 0, tA)}, {ev: commit("r1", 0, 0, tA)},
			{ev: done(0, 0, "s", ab)}, {ev: done(0, 0, "s", ab)}, {ev: commit("r1", 0, 0, tA)},
			{ev: commit("r2", 0, 0, tB), want: outSeal},
			{ev: commit("r2", 0, 0, tB), want: outRejected, err: ErrSealed},
			{ev: done(0, 0, "s", ab), want: outRejected, err: ErrSealed},
		}},
		{"second attempt of a done task changes nothing", 1, []step{
			{ev: done(0, 0, "s1", ab)}, {ev: commit("r1", 0, 1, tX)}, {ev: done(0, 1, "s2", onlyR1)},
			{ev: commit("r1", 0, 0, tA)}, {ev: commit("r2", 0, 1, tB)},
			{ev: commit("r2", 0, 0, tB), want: outSeal},
		}},
		{"first attempt reported done wins", 1, []step{
			{ev: commit("r1", 0, 0, tA)}, {ev: commit("r2", 0, 0, tB)},
			{ev: done(0, 1, "s2", onlyR1)}, {ev: done(0, 0, "s1", ab)},
			{ev: commit("r1", 0, 1, tA)},
			{ev: commit("r2", 0, 1, Totals{}), want: outSeal},
		}},
		{"mismatch after done", 1, []step{
			{ev: done(0, 0, "s", ab)}, {ev: commit("r1", 0, 0, tX), want: outFail, err: ErrMismatch},
			{ev: commit("r2", 0, 0, tB), want: outRejected, err: ErrFailed},
		}},
		{"mismatch before done", 1, []step{
			{ev: commit("r1", 0, 0, tA)}, {ev: commit("r2", 0, 0, tA)},
			{ev: done(0, 0, "s", ab), want: outFail, err: ErrMismatch},
		}},
		{"missing commit of a receiver without data", 1, []step{
			{ev: done(0, 0, "s", onlyR1)}, {ev: commit("r1", 0, 0, tA)},
			{ev: commit("r2", 0, 0, tB), want: outFail, err: ErrMismatch},
		}},
		{"conflicting duplicate commit of a pending attempt", 1, []step{
			{ev: commit("r1", 0, 3, tA)}, {ev: commit("r1", 0, 3, tB), want: outFail, err: ErrMismatch},
		}},
		{"conflicting duplicate done", 1, []step{
			{ev: done(0, 0, "s", ab)}, {ev: done(0, 0, "s", onlyR1), want: outFail, err: ErrMismatch},
		}},
		{"done attempt reported by another sender", 1, []step{
			{ev: done(0, 0, "s", ab)}, {ev: done(0, 0, "t", ab), want: outFail, err: ErrMismatch},
		}},
		{"task out of range", 2, []step{
			{ev: done(2, 0, "s", ab), want: outRejected, err: ErrTaskRange},
			{ev: commit("r1", 5, 0, tA), want: outRejected, err: ErrTaskRange},
		}},
		{"unknown receiver", 1, []step{
			{ev: commit("r9", 0, 0, tA), want: outRejected, err: ErrUnknownReceiver},
			{ev: done(0, 0, "s", map[string]Totals{"r9": tA}), want: outRejected, err: ErrUnknownReceiver},
			{ev: commit("r1", 0, 0, tA)}, {ev: commit("r2", 0, 0, tB)},
			{ev: done(0, 0, "s", ab), want: outSeal}, // the rejected events changed nothing
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustNew(t, Config{Shuffle: "sh", Tasks: tc.tasks, Receivers: []string{"r1", "r2"}})
			for i, s := range tc.steps {
				d, err := apply(tr, s.ev)
				if cerr := check(s.want, d, err); cerr != nil {
					t.Fatalf("step %d %v: %v", i, s.ev, cerr)
				}
				if got := errors.Join(err, d.Fail); s.err != nil && !errors.Is(got, s.err) {
					t.Fatalf("step %d %v: error %v, want %v", i, s.ev, got, s.err)
				}
			}
		})
	}
}

func mustNew(t testing.TB, cfg Config) *Tracker {
	t.Helper()
	tr, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestMismatchErrorNamesEverything(t *testing.T) {
	tr := mustNew(t, Config{Shuffle: "sh-7", Tasks: 4, Receivers: []string{"r1", "r2"}})
	apply(tr, done(3, 2, "s", map[string]Totals{"r2": tA}))
	d, _ := apply(tr, commit("r2", 3, 2, tX))
	if d.Fail == nil || tr.Phase() != Failed || tr.Err() != d.Fail {
		t.Fatalf("decision %+v phase %v err %v", d, tr.Phase(), tr.Err())
	}
	for _, want := range []string{"sh-7", "task 3", "attempt 2", "receiver r2", tA.String(), tX.String()} {
		if !strings.Contains(d.Fail.Error(), want) {
			t.Errorf("error %q does not contain %q", d.Fail, want)
		}
	}
	_, err := apply(tr, commit("r1", 0, 0, tA))
	if !errors.Is(err, ErrFailed) || !errors.Is(err, ErrMismatch) {
		t.Errorf("after failure: %v, want ErrFailed wrapping the mismatch", err)
	}
}

func TestFail(t *testing.T) {
	cause := errors.New("coordinator lost")
	tests := []struct {
		name   string
		sealed bool
		err    error
		want   error
	}{
		{"running", false, cause, cause},
		{"after seal", true, cause, cause},
		{"nil cause", false, nil, ErrFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := mustNew(t, Config{Shuffle: "sh", Tasks: 1, Receivers: []string{"r1"}})
			if tc.sealed {
				apply(tr, done(0, 0, "s", nil))
				if d, _ := apply(tr, commit("r1", 0, 0, Totals{})); !d.Seal {
					t.Fatal("not sealed")
				}
			}
			d := tr.Fail(tc.err)
			if !errors.Is(d.Fail, tc.want) || !strings.Contains(d.Fail.Error(), "sh") {
				t.Fatalf("Fail: %+v, want wrapping %v and naming the shuffle", d, tc.want)
			}
			if tr.Phase() != Failed || tr.Err() != d.Fail {
				t.Fatalf("phase %v err %v", tr.Phase(), tr.Err())
			}
			if again := tr.Fail(cause); again != (Decision{}) {
				t.Fatalf("second Fail returned %+v", again)
			}
		})
	}
}

func TestSetReceivers(t *testing.T) {
	tr := mustNew(t, Config{Shuffle: "sh", Tasks: 2, Receivers: []string{"r1", "r2"}})
	apply(tr, done(0, 0, "s", map[string]Totals{"r1": tA, "r2": tB}))
	if err := tr.SetReceivers(0, []string{"r1"}); !errors.Is(err, ErrStaleEpoch) {
		t.Fatalf("same epoch: %v", err)
	}
	if err := tr.SetReceivers(1, []string{"r1", "r1"}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("duplicate receiver: %v", err)
	}
	if err := tr.SetReceivers(1, []string{"r1", "r3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := apply(tr, done(1, 0, "s", map[string]Totals{"r2": tA})); !errors.Is(err, ErrUnknownReceiver) {
		t.Fatalf("r2 is not in epoch 1: %v", err)
	}
	steps := []step{
		{ev: commit("r3", 1, 0, tB)}, // before done, epoch 1 receiver
		{ev: commit("r2", 1, 0, tB)}, // r2 is not a receiver of task 1's epoch: ignored
		{ev: done(1, 0, "s", map[string]Totals{"r1": tA, "r3": tB})},
		{ev: commit("r1", 1, 0, tA)},
		{ev: commit("r1", 0, 0, tA)}, // task 0 keeps epoch 0: needs r1 and r2
		{ev: commit("r2", 0, 0, tB), want: outSeal},
	}
	for i, s := range steps {
		d, err := apply(tr, s.ev)
		if cerr := check(s.want, d, err); cerr != nil {
			t.Fatalf("step %d %v: %v", i, s.ev, cerr)
		}
	}
	if got, ok := tr.SentTo(1, "r3"); !ok || got != tB {
		t.Errorf("SentTo(1, r3) = %v, %v", got, ok)
	}
	if _, ok := tr.SentTo(0, "r3"); ok {
		t.Error("SentTo(0, r3): r3 is not in task 0's epoch")
	}
	if p := tr.Progress(); p.Epoch != 1 || p.CommitsExpected != 4 || p.Commits != 4 {
		t.Errorf("progress %+v", p)
	}
}

func TestQueries(t *testing.T) {
	tr := mustNew(t, Config{Shuffle: "sh", Tasks: 3, Receivers: []string{"r1", "r2"}})
	apply(tr, commit("r1", 0, 1, tA))
	apply(tr, done(0, 1, "node-a", map[string]Totals{"r1": tA}))
	apply(tr, done(2, 0, "node-b", map[string]Totals{"r1": tB, "r2": tA}))
	apply(tr, commit("r2", 2, 0, tA))
	if a, s, ok := tr.DoneAttempt(0); !ok || a != 1 || s != "node-a" {
		t.Errorf("DoneAttempt(0) = %d %q %v", a, s, ok)
	}
	for _, task := range []uint64{1, 3} {
		if _, _, ok := tr.DoneAttempt(task); ok {
			t.Errorf("DoneAttempt(%d) ok", task)
		}
	}
	if got, ok := tr.SentTo(0, "r2"); !ok || !got.IsZero() {
		t.Errorf("SentTo(0, r2) = %v, %v: want zero, true (marker only)", got, ok)
	}
	if _, ok := tr.SentTo(1, "r1"); ok {
		t.Error("SentTo of a task not done")
	}
	want := Progress{Phase: Running, Tasks: 3, TasksDone: 2, Commits: 2, CommitsExpected: 6,
		Totals: tA.Plus(tB).Plus(tA)}
	if p := tr.Progress(); p != want {
		t.Errorf("Progress = %+v, want %+v", p, want)
	}
	if got := tr.Receivers(); strings.Join(got, ",") != "r1,r2" {
		t.Errorf("Receivers = %v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"ok", Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a"}}, true},
		{"no shuffle", Config{Tasks: 1, Receivers: []string{"a"}}, false},
		{"no tasks", Config{Shuffle: "s", Receivers: []string{"a"}}, false},
		{"negative tasks", Config{Shuffle: "s", Tasks: -1, Receivers: []string{"a"}}, false},
		{"no receivers", Config{Shuffle: "s", Tasks: 1}, false},
		{"empty receiver", Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", ""}}, false},
		{"duplicate receiver", Config{Shuffle: "s", Tasks: 1, Receivers: []string{"a", "a"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate = %v, ok want %v", err, tc.ok)
			}
			if _, nerr := New(tc.cfg); (nerr == nil) != tc.ok {
				t.Fatalf("New = %v", nerr)
			}
		})
	}
}

func TestTotals(t *testing.T) {
	var a, b Totals
	a.Add(3, 30, 0xffffffff)
	a.Add(4, 40, 1)
	b.Add(4, 40, 1)
	b.Add(3, 30, 0xffffffff)
	want := Totals{Pieces: 2, Rows: 7, Bytes: 70, Checksum: 0x100000000}
	if a != want || b != want {
		t.Fatalf("Add: %v, %v, want %v (order independent)", a, b, want)
	}
	if got := a.Plus(tB); got != (Totals{Pieces: 3, Rows: 12, Bytes: 120, Checksum: 0x100000003}) {
		t.Fatalf("Plus = %v", got)
	}
}

func TestPhaseString(t *testing.T) {
	for p, want := range map[Phase]string{Running: "running", Sealed: "sealed", Failed: "failed", 9: "phase(9)"} {
		if p.String() != want {
			t.Errorf("%d: %q, want %q", int(p), p.String(), want)
		}
	}
}
