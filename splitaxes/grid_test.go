package splitaxes

import (
	"slices"
	"testing"
)

func TestRavelUnravel(t *testing.T) {
	grid := []int{3, 1, 4}
	for i := range 12 {
		idx := Unravel(i, grid)
		if Ravel(idx, grid) != i {
			t.Fatalf("Ravel(Unravel(%d)) = %d", i, Ravel(idx, grid))
		}
	}
	if got := Unravel(5, grid); !slices.Equal(got, []int{1, 0, 1}) {
		t.Fatalf("Unravel(5, %v) = %v, want [1 0 1] (C order)", grid, got)
	}
	if got := Unravel(0, nil); len(got) != 0 {
		t.Fatalf("Unravel of a 0-d grid = %v", got)
	}
}
