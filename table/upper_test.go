package table

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveUpper counts the divisions <= v by a scan.
func naiveUpper[T int64 | uint64 | float64](div []T, v T) uint32 {
	n := uint32(0)
	for _, d := range div {
		if d <= v {
			n++
		}
	}
	return n
}

// TestPlaceKeysMatchesScan: placeKeys counts the divisions <= each key, for
// every count of divisions up to 70 (duplicates included), keys below,
// between, on and above them, and key counts that are not a multiple of
// four; signed keys go through their order keys.
func TestPlaceKeysMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		for range 20 {
			div := make([]int64, n)
			for i := range div {
				div[i] = rng.Int64N(50) - 25
			}
			slices.Sort(div)
			vals := []int64{math.MinInt64, math.MaxInt64}
			for v := int64(-30); v <= 30; v++ {
				vals = append(vals, v)
			}
			vals = vals[:len(vals)-rng.IntN(4)]
			out := make([]uint32, len(vals))
			rangeSigned(vals, newKeyIndex(orderKeys(div, signedKey)), out)
			for i, v := range vals {
				if want := naiveUpper(div, v); out[i] != want {
					t.Fatalf("divisions %v: key %d placed %d, want %d", div, v, out[i], want)
				}
			}
		}
	}
}

// TestKeyIndexMatchesScan: a key index (16 divisions or more) places every
// key as counting the divisions <= it does: divisions spread over a narrow
// range, over all of uint64, near both of its ends (then the last bucket
// ends at 2^64 and holds divisions), in clusters, and with runs of one
// value; keys at 0, 2^64-1, on every division, next to it, and at random.
func TestKeyIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	spreads := map[string]func() uint64{
		"narrow":   func() uint64 { return 1000 + rng.Uint64N(5000) },
		"full":     rng.Uint64,
		"clusters": func() uint64 { return uint64(rng.IntN(3))<<62 + rng.Uint64N(100) },
		"repeats":  func() uint64 { return 1 << (rng.IntN(5) * 12) },
		"top":      func() uint64 { return math.MaxUint64 - rng.Uint64N(3) },
		"ends":     func() uint64 { return rng.Uint64N(100) - uint64(rng.IntN(2))*(1+rng.Uint64N(100)) }, // near 0 and near 2^64: the last bucket holds divisions
	}
	for name, draw := range spreads {
		for _, n := range []int{16, 17, 100, 999, 20000} { // 20000: more divisions than buckets
			div := make([]uint64, n)
			for i := range div {
				div[i] = draw()
			}
			slices.Sort(div)
			keys := []uint64{0, math.MaxUint64}
			for _, d := range div {
				keys = append(keys, d, d-1, d+1)
			}
			for range 3000 {
				keys = append(keys, draw(), rng.Uint64())
			}
			x := newKeyIndex(div)
			if x.first == nil {
				t.Fatalf("%s: no table for %d divisions", name, n)
			}
			out := make([]uint32, len(keys))
			placeKeys(x, keys, out)
			for i, k := range keys {
				want := n // every division is <= 2^64-1
				if k < math.MaxUint64 {
					want, _ = slices.BinarySearchFunc(div, k, func(d, k uint64) int { return cmp.Compare(d, k+1) })
				}
				if out[i] != uint32(want) {
					t.Fatalf("%s, %d divisions: key %d placed %d, want %d", name, n, k, out[i], want)
				}
			}
		}
	}
}

// TestFloatKeyOrder: float order keys compare as the floats do (-0 equal
// to +0), and NaN goes after every division.
func TestFloatKeyOrder(t *testing.T) {
	vals := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0,
		math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for _, a := range vals {
		for _, b := range vals {
			if (a <= b) != (floatKey(a) <= floatKey(b)) {
				t.Fatalf("%g <= %g is %v, their keys say %v", a, b, a <= b, floatKey(a) <= floatKey(b))
			}
		}
	}
	div := []float64{-1, 0, 2.5}
	out := make([]uint32, 3)
	rangeFloat([]float64{math.NaN(), -math.NaN(), math.Copysign(0, -1)}, newKeyIndex(orderKeys(div, floatKey)), out)
	if out[0] != 3 || out[1] != 3 || out[2] != 2 {
		t.Fatalf("NaN, -NaN, -0 placed %v among %v, want [3 3 2]", out, div)
	}
}

// BenchmarkRangeInt64 places 1M random int64 keys among 999 divisions (a
// set-index of 1000 partitions).
func BenchmarkRangeInt64(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	div := make([]int64, 999)
	for i := range div {
		div[i] = rng.Int64N(1 << 40)
	}
	slices.Sort(div)
	vals := make([]int64, 1<<20)
	for i := range vals {
		vals[i] = rng.Int64N(1 << 40)
	}
	out := make([]uint32, len(vals))
	ord := newKeyIndex(orderKeys(div, signedKey))
	b.SetBytes(8 << 20)
	for b.Loop() {
		rangeSigned(vals, ord, out)
	}
}
