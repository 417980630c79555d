package dedup

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// refLedger is the brute-force reference: one map entry per (task, partition).
type refLedger struct {
	tasks, partitions int
	owner             map[[2]uint64]uint32 // (task, partition) -> attempt
	attempts          map[[2]uint64]bool   // (task, attempt) committed
}

func newRef(tasks, partitions int) *refLedger {
	return &refLedger{tasks: tasks, partitions: partitions,
		owner: map[[2]uint64]uint32{}, attempts: map[[2]uint64]bool{}}
}

// commit mirrors Ledger.Commit; ok is false where Commit must fail.
func (r *refLedger) commit(task uint64, attempt uint32, parts []int) (owned []int, ok bool) {
	if task >= uint64(r.tasks) || slices.ContainsFunc(parts, func(p int) bool { return p >= r.partitions }) {
		return nil, false
	}
	r.attempts[[2]uint64{task, uint64(attempt)}] = true
	for _, p := range parts {
		k := [2]uint64{task, uint64(p)}
		if _, taken := r.owner[k]; !taken {
			r.owner[k] = attempt
		}
	}
	for p := range r.partitions {
		if a, ok := r.owner[[2]uint64{task, uint64(p)}]; ok && a == attempt {
			owned = append(owned, p)
		}
	}
	return owned, true
}

func (r *refLedger) taskCommitted(task uint64) bool {
	for k := range r.attempts {
		if k[0] == task {
			return true
		}
	}
	return false
}

func TestLedgerAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		tasks, parts := 1+rng.IntN(8), 1+rng.IntN(150)
		l, ref := NewLedger(tasks, parts), newRef(tasks, parts)
		for step := range 40 {
			task, attempt := uint64(rng.IntN(tasks+1)), uint32(rng.IntN(3))
			var set []int
			for range rng.IntN(parts + 1) {
				set = append(set, rng.IntN(parts+btoi(rng.IntN(20) == 0)))
			}
			got, err := l.Commit(task, attempt, BitsetOf(set...))
			want, ok := ref.commit(task, attempt, set)
			if (err == nil) != ok || (ok && !slices.Equal(members(got), want)) {
				t.Fatalf("iter %d step %d Commit(%d, %d, %v) = %v, %v; want %v, ok %v",
					iter, step, task, attempt, set, members(got), err, want, ok)
			}
			compareLedger(t, l, ref, iter)
		}
	}
}

// compareLedger checks every query of l against ref.
func compareLedger(t *testing.T, l *Ledger, ref *refLedger, iter int) {
	t.Helper()
	for task := range uint64(ref.tasks + 1) {
		if l.TaskCommitted(task) != ref.taskCommitted(task) {
			t.Fatalf("iter %d: TaskCommitted(%d) wrong", iter, task)
		}
		for p := range uint32(ref.partitions + 1) {
			wa, wok := ref.owner[[2]uint64{task, uint64(p)}]
			if a, ok := l.Committed(task, p); ok != wok || a != wa {
				t.Fatalf("iter %d: Committed(%d, %d) = %d %v, want %d %v", iter, task, p, a, ok, wa, wok)
			}
			for attempt := range uint32(3) {
				if l.Visible(task, attempt, p) != (wok && wa == attempt) {
					t.Fatalf("iter %d: Visible(%d, %d, %d) wrong", iter, task, attempt, p)
				}
			}
		}
	}
	st := l.Stats()
	if st.Attempts != len(ref.attempts) || st.PartitionsOwned != len(ref.owner) || st.Tasks != ref.tasks {
		t.Fatalf("iter %d: stats %+v, want %d attempts %d owned", iter, st, len(ref.attempts), len(ref.owner))
	}
}

func TestLedgerCommit(t *testing.T) {
	type commitCall struct {
		task    uint64
		attempt uint32
		parts   []int
		want    []int
		err     error
	}
	tests := []struct {
		name  string
		calls []commitCall
	}{
		{"first attempt owns all", []commitCall{{0, 0, []int{1, 3}, []int{1, 3}, nil}}},
		{"idempotent", []commitCall{{0, 0, []int{1, 3}, []int{1, 3}, nil}, {0, 0, []int{1, 3}, []int{1, 3}, nil}}},
		{"later attempt gets only the rest", []commitCall{
			{0, 0, []int{1, 3}, []int{1, 3}, nil}, {0, 1, []int{1, 2, 3, 4}, []int{2, 4}, nil},
			{0, 0, []int{1, 2, 3}, []int{1, 3}, nil}, // attempt 0 cannot take 2 back
		}},
		{"lower attempt committing later loses", []commitCall{{2, 5, []int{0}, []int{0}, nil}, {2, 1, []int{0}, nil, nil}}},
		{"repeat adds partitions", []commitCall{{0, 0, []int{1}, []int{1}, nil}, {0, 0, []int{2}, []int{1, 2}, nil}}},
		{"tasks are independent", []commitCall{{0, 0, []int{1}, []int{1}, nil}, {1, 1, []int{1}, []int{1}, nil}}},
		{"a shared set grows for one task only", []commitCall{
			{0, 0, []int{1, 3}, []int{1, 3}, nil}, {1, 0, []int{1, 3}, []int{1, 3}, nil},
			{0, 0, []int{5}, []int{1, 3, 5}, nil}, {1, 0, nil, []int{1, 3}, nil},
			{2, 0, []int{1, 3}, []int{1, 3}, nil},
		}},
		{"empty set commits the task", []commitCall{{1, 0, nil, nil, nil}}},
		{"task out of range", []commitCall{{3, 0, []int{1}, nil, ErrTaskRange}}},
		{"partition out of range", []commitCall{{0, 0, []int{1, 10}, nil, ErrPartitionRange}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger(3, 10)
			for i, c := range tc.calls {
				got, err := l.Commit(c.task, c.attempt, BitsetOf(c.parts...))
				if !errors.Is(err, c.err) || (c.err == nil && !slices.Equal(members(got), c.want)) {
					t.Fatalf("call %d: %v, %v; want %v, %v", i, members(got), err, c.want, c.err)
				}
			}
		})
	}
}

func TestLedgerQueries(t *testing.T) {
	l := NewLedger(2, 10)
	in := BitsetOf(4)
	out, _ := l.Commit(0, 1, in)
	in.Set(5)
	out.Set(6) // neither input nor result is retained
	if l.Visible(0, 1, 5) || l.Visible(0, 1, 6) || !l.Visible(0, 1, 4) {
		t.Fatal("ledger aliases caller's sets")
	}
	l.Commit(1, 0, nil)
	tests := []struct {
		name string
		got  bool
	}{
		{"task with empty commit is committed", l.TaskCommitted(1)},
		{"task out of range", !l.TaskCommitted(9)},
		{"visible out of range", !l.Visible(9, 0, 0) && !l.Visible(0, 1, 1<<31)},
		{"other attempt not visible", !l.Visible(0, 0, 4)},
		{"stats", l.Stats().TasksCommitted == 2 && l.Stats().Attempts == 2 && l.Stats().PartitionsOwned == 1},
	}
	for _, tc := range tests {
		if !tc.got {
			t.Errorf("%s: false", tc.name)
		}
	}
	if a, ok := l.Committed(0, 4); !ok || a != 1 {
		t.Errorf("Committed(0, 4) = %d, %v", a, ok)
	}
	if _, ok := l.Committed(5, 0); ok {
		t.Error("Committed of a task out of range")
	}
	if NewLedger(-1, -1).Stats().Tasks != 0 {
		t.Error("negative counts not clamped")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLedgerMemoryAtScale commits every task of a 100,000 x 100,000
// shuffle once, each owning the receiver's share of the partitions (what a
// receiver does), and checks the ledger stays O(tasks + partitions): within
// 64 bytes per task plus 8 bytes per partition, against the 1.25 GB of one
// set per task.
func TestLedgerMemoryAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 100,000 tasks of 100,000 partitions")
	}
	const tasks, partitions = 100_000, 100_000
	held := NewBitset(partitions)
	for p := 0; p < partitions; p += 4 { // one node of four
		held.Set(p)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := NewLedger(tasks, partitions)
	for task := range uint64(tasks) {
		if _, err := l.Commit(task, 0, held); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	bound := uint64(64*tasks + 8*partitions)
	if grown := after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc); grown > bound {
		t.Errorf("ledger grew the heap by %d bytes, over the bound %d", grown, bound)
	}
	if st := l.Stats(); st.MemoryBytes > int(bound) || st.PartitionsOwned != tasks*partitions/4 {
		t.Errorf("stats %+v: want MemoryBytes <= %d and %d partitions owned", st, bound, tasks*partitions/4)
	}
	if !l.Visible(tasks-1, 0, 4) || l.Visible(tasks-1, 0, 5) || l.Visible(0, 1, 4) {
		t.Error("visibility of the shared set is wrong")
	}
	runtime.KeepAlive(l)
}
