package reports

import (
	"slices"
	"testing"
)

// TestQueue: the first add of a key starts its sender, later ones join the
// next batch; take hands out batches in order, up to the limit, skipping
// what keep refuses, and stops the sender once the key is empty, after
// which the next add starts one again.
func TestQueue(t *testing.T) {
	var q queue[string, int]
	if !q.add("a", 1) {
		t.Fatal("first add of a key: the caller must start its sender")
	}
	for v := 2; v <= 5; v++ {
		if q.add("a", v) {
			t.Fatalf("add %d while a's sender runs asked for a second sender", v)
		}
	}
	if !q.add("b", 9) {
		t.Fatal("another key has a sender of its own")
	}
	odd := func(v int) bool { return v%2 == 1 }
	for _, want := range [][]int{{1, 3}, {5}, nil} {
		if got := q.take("a", 2, odd); !slices.Equal(got, want) {
			t.Fatalf("take(a, 2, odd) = %v, want %v", got, want)
		}
	}
	if !q.add("a", 6) {
		t.Fatal("add after the sender stopped must start a new one")
	}
	if got := q.abandon("a"); !slices.Equal(got, []int{6}) {
		t.Fatalf("abandon(a) = %v, want [6]", got)
	}
	if !q.add("a", 7) {
		t.Fatal("add after abandon must start a sender")
	}
	if got := q.take("b", 10, nil); !slices.Equal(got, []int{9}) {
		t.Fatalf("take(b) = %v, want [9]", got)
	}
}
