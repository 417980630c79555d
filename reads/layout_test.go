package reads

import (
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// TestAxisStarts: each chunk starts where the ones before it end, and every
// start after an unknown size is unknown.
func TestAxisStarts(t *testing.T) {
	u := splitaxes.Unknown
	for _, tc := range []struct {
		name   string
		chunks [][]int64
		want   [][]int64
	}{
		{"one axis", [][]int64{{3, 3, 2}}, [][]int64{{0, 3, 6}}},
		{"two axes", [][]int64{{5}, {2, 4, 1}}, [][]int64{{0}, {0, 2, 6}}},
		{"unknown size", [][]int64{{2, u, 4, 1}}, [][]int64{{0, 2, u, u}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := axisStarts(tc.chunks)
			if !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("axisStarts(%v) = %v, want %v", tc.chunks, got, tc.want)
			}
		})
	}
}

// TestDistStarts: a block axis's chunks start at the distribution's
// starts (padding included), a cyclic axis's are unknown, an axis without
// a distribution keeps its starts.
func TestDistStarts(t *testing.T) {
	u := splitaxes.Unknown
	starts := [][]int64{{0, 4}, {0, 4}, {0, 4}}
	dists := []*splitaxes.Dist{nil, {Type: splitaxes.Block, Starts: []int64{0, 3}}, {Type: splitaxes.Cyclic}}
	want := [][]int64{{0, 4}, {0, 3}, {u, u}}
	if got := distStarts(starts, dists); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("distStarts = %v, want %v", got, want)
	}
}

// TestKnown: an unknown size is null, a known one is itself.
func TestKnown(t *testing.T) {
	got := known([]int64{7, splitaxes.Unknown})
	if got[0] == nil || *got[0] != 7 || got[1] != nil {
		t.Fatalf("known([7 unknown]) = [%v %v], want [7 nil]", got[0], got[1])
	}
}
