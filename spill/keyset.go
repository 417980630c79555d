package spill

import (
	"cmp"
	"slices"
)

// keySet is the set of keys of one partition, for duplicate detection: every key put, in
// memory or on disk. A Go map costs 40-90 bytes a key; this costs 16 (partition is implied).
// It is log-structured: a small unsorted tail plus sorted runs, each run less than half the
// length of the one before it, so there are O(log n) runs. Lookups are O(log² n); inserts
// cost O(log n) amortised (a full tail is sorted into a run, and runs merge like the carries
// of a binary counter).
//
// Keys mostly arrive in increasing order (tasks are put roughly in order), so the set also
// keeps an upper bound of its keys: a key above it is absent without a search.
type keySet struct {
	runs  [][]keyTail // each sorted, and less than half the length of the one before
	tail  []keyTail   // unsorted, at most keySetTail
	bound keyTail     // no key in the set is greater (an overestimate after a remove)
	any   bool        // bound is set: a key was added
}

// keySetTail is the length at which the tail becomes a run.
const keySetTail = 32

// keyTail is a Key without its partition.
type keyTail struct {
	task         uint64
	attempt, seq uint32
}

func tailOf(k Key) keyTail { return keyTail{k.Task, k.Attempt, k.Seq} }

func compareTails(a, b keyTail) int {
	if c := cmp.Compare(a.task, b.task); c != 0 {
		return c
	}
	if c := cmp.Compare(a.attempt, b.attempt); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// has reports whether k is in the set.
func (s *keySet) has(k Key) bool {
	t := tailOf(k)
	if !s.any || compareTails(t, s.bound) > 0 {
		return false
	}
	if slices.Contains(s.tail, t) {
		return true
	}
	for _, r := range s.runs {
		if _, ok := slices.BinarySearchFunc(r, t, compareTails); ok {
			return true
		}
	}
	return false
}

// add inserts k, which must not be in the set.
func (s *keySet) add(k Key) {
	t := tailOf(k)
	if !s.any || compareTails(t, s.bound) > 0 {
		s.bound, s.any = t, true
	}
	s.tail = append(s.tail, t)
	if len(s.tail) < keySetTail {
		return
	}
	run := slices.Clone(s.tail)
	slices.SortFunc(run, compareTails)
	s.tail = s.tail[:0]
	s.runs = append(s.runs, run)
	for n := len(s.runs); n >= 2 && len(s.runs[n-1]) >= len(s.runs[n-2])/2; n = len(s.runs) {
		s.runs[n-2] = mergeRuns(s.runs[n-2], s.runs[n-1])
		s.runs[n-1] = nil
		s.runs = s.runs[:n-1]
	}
}

// remove deletes k if present (after a failed Put: rare, O(n)).
func (s *keySet) remove(k Key) {
	t := tailOf(k)
	if i := slices.Index(s.tail, t); i >= 0 {
		s.tail = slices.Delete(s.tail, i, i+1)
		return
	}
	for i, r := range s.runs {
		if j, ok := slices.BinarySearchFunc(r, t, compareTails); ok {
			s.runs[i] = slices.Delete(r, j, j+1)
			return
		}
	}
}

// mergeRuns merges two sorted runs into a new one.
func mergeRuns(a, b []keyTail) []keyTail {
	out := make([]keyTail, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if compareTails(a[i], b[j]) <= 0 {
			out, i = append(out, a[i]), i+1
		} else {
			out, j = append(out, b[j]), j+1
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}
