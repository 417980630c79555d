package dfops

import (
	"hash/maphash"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestExactHashIsBijection checks what an exact hash table relies on: the
// hash of a one-column fixed-width key, fmix64(word ^ hashMul), is a
// bijection, so equal hashes mean equal keys. It inverts every step.
func TestExactHashIsBijection(t *testing.T) {
	unshift := func(h uint64) uint64 { return h ^ h>>33 } // x ^ x>>33 is its own inverse for shifts >= 32
	inv := func(m uint64) uint64 {                        // the inverse of an odd m modulo 2^64 (Newton's iteration)
		x := m
		for range 6 {
			x *= 2 - m*x
		}
		return x
	}
	unfmix := func(h uint64) uint64 {
		h = unshift(h)
		h *= inv(0xC4CEB9FE1A85EC53)
		h = unshift(h)
		h *= inv(0xFF51AFD7ED558CCD)
		return unshift(h)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	words := buildRecord(t, memory.DefaultAllocator, rng, 100_000, []testCol{{"k", arrow.PrimitiveTypes.Int64,
		func(rng *rand.Rand, _ int) any { return int(rng.Uint64()) }}})
	defer words.Release()
	ks, err := newKeys(words.Columns(), 100_000, maphash.MakeSeed())
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range ks.hash {
		if w, got := ks.cols[0].words[i], unfmix(h)^hashMul; got != w {
			t.Fatalf("word %#x hashes to %#x, which inverts to %#x", w, h, got)
		}
	}
	for _, tc := range []struct {
		cols  []testCol
		exact bool
	}{
		{[]testCol{{"k", arrow.PrimitiveTypes.Int64, rowID}}, true},
		{[]testCol{{"k", arrow.PrimitiveTypes.Float64, rowFloat}}, true},
		{[]testCol{{"k", arrow.BinaryTypes.String, rowName}}, false},
		{[]testCol{{"k", arrow.PrimitiveTypes.Int64, rowID}, {"j", arrow.PrimitiveTypes.Int64, rowID}}, false},
	} {
		rec := buildRecord(t, memory.DefaultAllocator, rng, 10, tc.cols)
		ks, err := newKeys(rec.Columns(), 10, maphash.MakeSeed())
		if err != nil {
			t.Fatal(err)
		}
		if got := buildTable(ks).exact; got != tc.exact {
			t.Errorf("key columns %v: exact %v, want %v", rec.Schema(), got, tc.exact)
		}
		rec.Release()
	}
}
