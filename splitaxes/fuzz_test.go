package splitaxes

import (
	"errors"
	"slices"
	"testing"
)

// fuzzSizes decodes chunk sizes from bytes: values -2..7, so that invalid
// (-2), Unknown (-1) and zero sizes are all common.
func fuzzSizes(b []byte) []int64 {
	out := make([]int64, len(b))
	for i, c := range b {
		out[i] = int64(c%10) - 2
	}
	return out
}

// balance makes the totals of two all-known chunkings equal by appending the
// difference to the shorter one.
func balance(old, new []int64) ([]int64, []int64) {
	_, to := refPrefix(old)
	_, tn := refPrefix(new)
	if to > tn {
		return old, append(new, to-tn)
	}
	if tn > to {
		return append(old, tn-to), new
	}
	return old, new
}

func FuzzAxis(f *testing.F) {
	f.Add([]byte{12, 12, 12, 12, 12}, []byte{27, 7, 22}, true)
	f.Add([]byte{7, 2, 7}, []byte{7, 2, 7}, false)
	f.Add([]byte{1, 1}, []byte{1, 1}, false)
	f.Add([]byte{1, 5}, []byte{1, 3, 4}, true)
	f.Add([]byte{0}, []byte{4}, false)
	f.Fuzz(func(t *testing.T, ob, nb []byte, bal bool) {
		if len(ob) > 64 || len(nb) > 64 {
			return
		}
		old, new := fuzzSizes(ob), fuzzSizes(nb)
		valid := !slices.ContainsFunc(append(slices.Clone(old), new...), func(s int64) bool { return s < 0 })
		if bal && valid {
			old, new = balance(old, new)
		}
		a, err := NewAxis(old, new)
		if err != nil {
			checkFuzzError(t, old, new, err)
			return
		}
		if valid {
			if got, want := collect(a), bruteForce(old, new); !equalSplits(got, want) {
				t.Fatalf("old %v new %v\n got %v\nwant %v", old, new, got, want)
			}
		}
		checkInverse(t, a)
	})
}

// checkFuzzError checks that NewAxis failed for the reason the input
// implies.
func checkFuzzError(t *testing.T, old, new []int64, err error) {
	t.Helper()
	all := append(slices.Clone(old), new...)
	switch {
	case slices.ContainsFunc(all, func(s int64) bool { return s < Unknown }):
		if !errors.Is(err, ErrBadSize) {
			t.Fatalf("old %v new %v: got %v, want ErrBadSize", old, new, err)
		}
	case slices.Contains(all, Unknown):
		if !errors.Is(err, ErrUnknownChanged) || slices.Equal(old, new) {
			t.Fatalf("old %v new %v: got %v, want ErrUnknownChanged", old, new, err)
		}
	default:
		_, to := refPrefix(old)
		if _, tn := refPrefix(new); !errors.Is(err, ErrTotalMismatch) || to == tn {
			t.Fatalf("old %v new %v: got %v, want ErrTotalMismatch", old, new, err)
		}
	}
}
