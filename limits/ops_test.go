package limits

import "testing"

// TestPassesFor: an op that wants more than the budget makes enough passes
// for each to fit, at most the limit; one that fits makes one.
func TestPassesFor(t *testing.T) {
	for _, tc := range []struct {
		want, size int64
		limit, k   int
	}{
		{250, 100, 64, 3}, {250, 100, 2, 2}, {200, 100, 64, 2}, {100, 100, 64, 1},
		{10, 100, 64, 1}, {0, 100, 64, 1}, {250, 100, 1, 1}, {1 << 40, 1, 64, 64},
	} {
		if k := passesFor(tc.want, tc.size, tc.limit); k != tc.k {
			t.Errorf("passesFor(%d, %d, %d) = %d, want %d", tc.want, tc.size, tc.limit, k, tc.k)
		}
	}
}
