package splitaxes

import (
	"errors"
	"testing"
)

// TestPeriodicGhostsMustAgree: two periodic sides with different ghost
// zones describe different arrays, and a ghost zone longer than the period
// copies nothing; both are refused.
func TestPeriodicGhostsMustAgree(t *testing.T) {
	one := func(g0, g1 int64) *Dist {
		return &Dist{Type: Block, Size: 10, Starts: []int64{0}, Pad: [][2]int64{{g0, g1}}, Periodic: true}
	}
	if _, err := NewDistAxis([]int64{10}, one(1, 1), []int64{10}, one(2, 2)); !errors.Is(err, ErrBadRun) {
		t.Errorf("ghosts (1,1) against (2,2): %v, want ErrBadRun", err)
	}
	if _, err := NewDistAxis([]int64{10}, one(4, 4), []int64{10}, nil); !errors.Is(err, ErrBadRun) {
		t.Errorf("ghosts (4,4) of 10: %v, want ErrBadRun", err)
	}
	if _, err := NewDistAxis([]int64{10}, one(1, 2), []int64{5, 5}, nil); err != nil {
		t.Errorf("ghosts (1,2) to regular chunks: %v", err)
	}
}

// TestWrap checks the index a ghost copies.
func TestWrap(t *testing.T) {
	for _, c := range []struct{ i, want int64 }{{0, 7}, {1, 8}, {2, 2}, {8, 8}, {9, 2}} {
		if got := Wrap(c.i, 10, [2]int64{2, 1}); got != c.want {
			t.Errorf("Wrap(%d) = %d, want %d", c.i, got, c.want)
		}
	}
}
