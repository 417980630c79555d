package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// members lists b's members via ForEach.
func members(b *Bitset) []int {
	var out []int
	b.ForEach(func(i int) bool { out = append(out, i); return true })
	return out
}

// sortedKeys lists a reference set in order.
func sortedKeys(m map[int]bool) []int {
	var out []int
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestBitsetAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 500 {
		n := 1 + rng.IntN(300)
		var a, b Bitset // zero values must work
		ra, rb := map[int]bool{}, map[int]bool{}
		for range rng.IntN(2 * n) {
			i, j := rng.IntN(n), rng.IntN(n)
			a.Set(i)
			ra[i] = true
			b.Set(j)
			rb[j] = true
			if rng.IntN(5) == 0 {
				a.Clear(j)
				delete(ra, j)
			}
		}
		c := a.Clone()
		c.AndNot(&b)
		u := a.Clone()
		u.Or(&b)
		rc, ru := map[int]bool{}, map[int]bool{}
		for k := range ra {
			rc[k] = !rb[k]
			ru[k] = true
		}
		for k := range rb {
			ru[k] = true
		}
		for _, tc := range []struct {
			name string
			got  *Bitset
			want []int
		}{{"a", &a, sortedKeys(ra)}, {"a-b", c, sortedKeys(rc)}, {"a|b", u, sortedKeys(ru)}} {
			if got := members(tc.got); !slices.Equal(got, tc.want) {
				t.Fatalf("iter %d %s: %v, want %v", iter, tc.name, got, tc.want)
			}
			if tc.got.Count() != len(tc.want) || !tc.got.Equal(BitsetOf(tc.want...)) {
				t.Fatalf("iter %d %s: Count %d / Equal false, want %d members", iter, tc.name, tc.got.Count(), len(tc.want))
			}
			wantLen := 0
			if len(tc.want) > 0 {
				wantLen = tc.want[len(tc.want)-1] + 1
			}
			if tc.got.Len() != wantLen || tc.got.Empty() != (wantLen == 0) {
				t.Fatalf("iter %d %s: Len %d, want %d", iter, tc.name, tc.got.Len(), wantLen)
			}
			for i := -1; i <= n+64; i++ {
				if tc.got.Has(i) != slices.Contains(tc.want, i) {
					t.Fatalf("iter %d %s: Has(%d) wrong", iter, tc.name, i)
				}
			}
		}
	}
}

func TestBitsetEdges(t *testing.T) {
	var nilSet *Bitset
	tests := []struct {
		name string
		run  func() bool
	}{
		{"nil has nothing", func() bool { return !nilSet.Has(0) && nilSet.Count() == 0 && nilSet.Len() == 0 }},
		{"clone of nil is empty", func() bool { return nilSet.Clone().Empty() }},
		{"negative ignored", func() bool { b := BitsetOf(-1, -64); return b.Empty() && !b.Has(-1) }},
		{"clone shares nothing", func() bool {
			a := BitsetOf(3)
			c := a.Clone()
			c.Set(4)
			a.Set(70)
			return !a.Has(4) && !c.Has(70)
		}},
		{"clone is trimmed", func() bool { a := NewBitset(10000); a.Set(1); return a.Clone().Bytes() == bitsetHeader+8 }},
		{"and-not with nil and shorter", func() bool {
			a := BitsetOf(1, 200)
			a.AndNot(nil)
			a.AndNot(BitsetOf(1))
			return slices.Equal(members(a), []int{200})
		}},
		{"or grows", func() bool { a := BitsetOf(1); a.Or(BitsetOf(500)); a.Or(nil); return a.Count() == 2 && a.Has(500) }},
		{"for-each stops", func() bool {
			n := 0
			BitsetOf(1, 2, 3, 100).ForEach(func(int) bool { n++; return n < 2 })
			return n == 2
		}},
		{"equal ignores capacity", func() bool { a := NewBitset(1000); a.Set(2); return a.Equal(BitsetOf(2)) }},
		{"new has room", func() bool { a := NewBitset(640); a.Set(639); return cap(a.w) == 10 && a.Count() == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.run() {
				t.Fatal("failed")
			}
		})
	}
}
