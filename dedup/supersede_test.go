package dedup

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// supersede mirrors Ledger.Supersede; ok is false where it must fail.
func (r *refLedger) supersede(task uint64, attempt uint32, parts []int) (owned []int, ok bool) {
	if task >= uint64(r.tasks) || slices.ContainsFunc(parts, func(p int) bool { return p >= r.partitions }) ||
		!r.attempts[[2]uint64{task, uint64(attempt)}] {
		return nil, false
	}
	for _, p := range parts {
		r.owner[[2]uint64{task, uint64(p)}] = attempt
	}
	for p := range r.partitions {
		if a, ok := r.owner[[2]uint64{task, uint64(p)}]; ok && a == attempt {
			owned = append(owned, p)
		}
	}
	return owned, true
}

// TestSupersedeAgainstReference mixes commits and supersedes at random
// (shared first sets included: many tasks commit the same set) and checks
// every query and the counters against the reference after each step.
func TestSupersedeAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for iter := range 300 {
		tasks, parts := 1+rng.IntN(8), 1+rng.IntN(150)
		l, ref := NewLedger(tasks, parts), newRef(tasks, parts)
		common := randomSet(rng, parts, 0)
		for step := range 40 {
			task, attempt := uint64(rng.IntN(tasks+1)), uint32(rng.IntN(3))
			set := common
			if rng.IntN(2) == 0 {
				set = randomSet(rng, parts, btoi(rng.IntN(20) == 0))
			}
			var got *Bitset
			var err error
			var want []int
			var ok bool
			if rng.IntN(3) == 0 {
				got, err = l.Supersede(task, attempt, BitsetOf(set...))
				want, ok = ref.supersede(task, attempt, set)
			} else {
				got, err = l.Commit(task, attempt, BitsetOf(set...))
				want, ok = ref.commit(task, attempt, set)
			}
			if (err == nil) != ok || (ok && !slices.Equal(members(got), want)) {
				t.Fatalf("iter %d step %d (%d, %d, %v) = %v, %v; want %v, ok %v",
					iter, step, task, attempt, set, members(got), err, want, ok)
			}
			compareLedger(t, l, ref, iter)
		}
	}
}

// randomSet is up to parts random partitions, with extra more out of range.
func randomSet(rng *rand.Rand, parts, extra int) []int {
	var set []int
	for range rng.IntN(parts + 1) {
		set = append(set, rng.IntN(parts+extra))
	}
	return set
}

// TestSupersede: a replay takes every partition from the first attempt, a
// shared first set is copied (the other tasks sharing it keep theirs), and
// an attempt that did not commit cannot supersede.
func TestSupersede(t *testing.T) {
	l := NewLedger(2, 10)
	for task := range uint64(2) {
		if _, err := l.Commit(task, 0, BitsetOf(1, 3, 5)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Supersede(0, 1, BitsetOf(1, 3, 5)); !errors.Is(err, ErrNotCommitted) {
		t.Fatalf("supersede by an attempt that did not commit: %v, want ErrNotCommitted", err)
	}
	if owned, err := l.Commit(0, 1, BitsetOf(1, 3, 5, 7)); err != nil || !slices.Equal(members(owned), []int{7}) {
		t.Fatalf("replay's commit owns %v, %v; want [7]", members(owned), err)
	}
	owned, err := l.Supersede(0, 1, BitsetOf(1, 3, 5, 7))
	if err != nil || !slices.Equal(members(owned), []int{1, 3, 5, 7}) {
		t.Fatalf("Supersede = %v, %v; want [1 3 5 7]", members(owned), err)
	}
	for _, p := range []uint32{1, 3, 5} {
		if l.Visible(0, 0, p) || !l.Visible(0, 1, p) || !l.Visible(1, 0, p) {
			t.Fatalf("partition %d: task 0 attempt 0 visible %t, attempt 1 %t; task 1 attempt 0 %t",
				p, l.Visible(0, 0, p), l.Visible(0, 1, p), l.Visible(1, 0, p))
		}
	}
	if st := l.Stats(); st.PartitionsOwned != 7 {
		t.Errorf("%d partitions owned, want 7", st.PartitionsOwned)
	}
}
