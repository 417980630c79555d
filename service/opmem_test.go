package service

import (
	"context"
	"testing"

	"github.com/shufflenode/shufflenode/budget"
)

// TestOpMemoryPasses: an op that wanted more than the budget (and got all
// of it) makes enough passes for each to fit, at most the limit, and when
// it runs in them keeps one pass's share and gives the rest back.
func TestOpMemoryPasses(t *testing.T) {
	b := budget.New(100)
	got, err := b.Acquire(context.Background(), 250)
	if err != nil || got != 100 {
		t.Fatalf("Acquire(250) = %d, %v", got, err)
	}
	m := &OpMemory{b: b, n: got, want: 250}
	if k := m.Passes(64); k != 3 {
		t.Fatalf("250 bytes wanted of a budget of 100: %d passes, want 3", k)
	}
	if k := m.Passes(2); k != 2 {
		t.Fatalf("at most 2 passes: %d", k)
	}
	m.InPasses(3)
	if m.Bytes() != 84 || b.Used() != 84 {
		t.Fatalf("in 3 passes: holds %d, budget used %d; want 84 (250/3 rounded up)", m.Bytes(), b.Used())
	}
	m.InPasses(1) // one pass: nothing to give back
	m.Release()
	if b.Used() != 0 || m.Bytes() != 0 {
		t.Fatalf("after Release: used %d, op holds %d", b.Used(), m.Bytes())
	}
	small := &OpMemory{b: b, n: 10, want: 10}
	if k := small.Passes(64); k != 1 {
		t.Fatalf("10 bytes of a budget of 100: %d passes", k)
	}
}
