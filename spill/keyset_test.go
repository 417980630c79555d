package spill

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestKeySetMatchesMap runs random adds, removes and lookups against a keySet and a map.
func TestKeySetMatchesMap(t *testing.T) {
	for _, keys := range []int{10, 100, 3000, -3000} { // negative: mostly ascending keys
		t.Run(fmt.Sprint(keys, " keys"), func(t *testing.T) {
			ascending := keys < 0
			keys = max(keys, -keys)
			rng := rand.New(rand.NewPCG(uint64(keys), 5))
			var set keySet
			ref := map[Key]bool{}
			adds := 0
			for i := range 4 * keys {
				task := uint64(rng.IntN(keys))
				if ascending {
					task = uint64(i/4 + rng.IntN(8)) // as tasks put a few at a time arrive
				}
				k := Key{Partition: 1, Task: task, Attempt: uint32(rng.IntN(2)), Seq: uint32(rng.IntN(2))}
				switch has := set.has(k); {
				case has != ref[k]:
					t.Fatalf("has(%v) = %v, want %v", k, has, ref[k])
				case has && rng.IntN(8) == 0:
					set.remove(k)
					delete(ref, k)
				case !has:
					set.add(k)
					ref[k] = true
					adds++
				}
			}
			checkKeySet(t, &set, ref)
			if limit := bits.Len(uint(adds/keySetTail)) + 1; len(set.runs) > limit {
				t.Errorf("%d runs after %d adds, want at most %d", len(set.runs), adds, limit)
			}
		})
	}
}

// checkKeySet checks that set holds exactly the keys of ref.
func checkKeySet(t *testing.T, set *keySet, ref map[Key]bool) {
	t.Helper()
	n := len(set.tail)
	for _, r := range set.runs {
		n += len(r)
	}
	if n != len(ref) {
		t.Fatalf("set holds %d keys, want %d", n, len(ref))
	}
	for k := range ref {
		if !set.has(k) {
			t.Fatalf("lost %v", k)
		}
	}
}

// BenchmarkKeySetAdd adds distinct keys and looks each up first, as Put does.
func BenchmarkKeySetAdd(b *testing.B) {
	var set keySet
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := Key{Task: uint64(i * 7919 % (1 << 30)), Seq: uint32(i)}
		if set.has(k) {
			b.Fatalf("%v already present", k)
		}
		set.add(k)
	}
	b.ReportMetric(float64(len(set.runs)), "runs")
}
