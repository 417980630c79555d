package dfops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// withNulls makes g return null for about one row in eight.
func withNulls(g gen) gen {
	return func(rng *rand.Rand, i int) any {
		if rng.IntN(8) == 0 {
			return nil
		}
		return g(rng, i)
	}
}

func smallInt(rng *rand.Rand, _ int) any { return rng.IntN(30) - 10 }
func posInt(rng *rand.Rand, _ int) any   { return rng.IntN(30) }
func word(rng *rand.Rand, _ int) any     { return []string{"", "a", "ab", "b", "ba", "\xff"}[rng.IntN(6)] }
func oneBool(rng *rand.Rand, _ int) any  { return rng.IntN(2) == 0 }
func someFloat(rng *rand.Rand, _ int) any {
	return []float64{math.NaN(), -1.5, 0, math.Copysign(0, -1), 2, math.Inf(1), math.Inf(-1), 0.25}[rng.IntN(8)]
}

// refLess orders Go values as SortStable does: missing (nil, NaN) last.
func refLess(a, b any) bool {
	missing := func(v any) bool { f, ok := v.(float64); return v == nil || ok && math.IsNaN(f) }
	if missing(a) || missing(b) {
		return !missing(a) && missing(b)
	}
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case uint64:
		return a < b.(uint64)
	case float64:
		return a < b.(float64)
	case bool:
		return !a && b.(bool)
	}
	return a.(string) < b.(string)
}

// sortCases are key columns of every sortable type: ties, nulls, NaN, -0
// and infinities among them.
var sortCases = []struct {
	name string
	typ  arrow.DataType
	gen  gen
}{
	{"int64", arrow.PrimitiveTypes.Int64, withNulls(smallInt)},
	{"int8", arrow.PrimitiveTypes.Int8, withNulls(smallInt)},
	{"uint64", arrow.PrimitiveTypes.Uint64, withNulls(posInt)},
	{"uint16 no nulls", arrow.PrimitiveTypes.Uint16, posInt},
	{"float64 with NaN, -0 and infinities", arrow.PrimitiveTypes.Float64, withNulls(someFloat)},
	{"float32", arrow.PrimitiveTypes.Float32, withNulls(someFloat)},
	{"float16", arrow.FixedWidthTypes.Float16, withNulls(someFloat)},
	{"string", arrow.BinaryTypes.String, withNulls(word)},
	{"large_string", arrow.BinaryTypes.LargeString, withNulls(word)},
	{"binary", arrow.BinaryTypes.Binary, withNulls(word)},
	{"bool", arrow.FixedWidthTypes.Boolean, withNulls(oneBool)},
	{"date32", arrow.FixedWidthTypes.Date32, withNulls(smallInt)},
	{"timestamp", &arrow.TimestampType{Unit: arrow.Microsecond}, withNulls(smallInt)},
}

func TestSortStableMatchesSliceStable(t *testing.T) {
	for i, tc := range sortCases {
		for _, n := range []int{0, 1, 2, 500} {
			t.Run(tc.name, func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				rng := rand.New(rand.NewPCG(uint64(i), uint64(n)))
				full := buildRecord(t, mem, rng, n+1, []testCol{{"id", arrow.PrimitiveTypes.Int64, rowID}, {"k", tc.typ, tc.gen}})
				defer full.Release()
				rec := full.NewSlice(1, int64(n+1))
				defer rec.Release()
				checkSorted(t, mem, rec)
			})
		}
	}
}

// checkSorted sorts rec by "k" and compares the ids with sort.SliceStable.
func checkSorted(t *testing.T, mem memory.Allocator, rec arrow.Record) {
	t.Helper()
	rows := rowsOf(rec)
	want := slices.Clone(rows)
	sort.SliceStable(want, func(a, b int) bool { return refLess(want[a][1], want[b][1]) })
	got, err := SortStable(mem, rec, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	compareRows(t, rowsOf(got), want)
	for _, k := range []int{1, 2, 3, 7, MaxPasses} {
		compareRows(t, sortInPasses(t, mem, rec, k), want)
	}
}

// sortInPasses sorts rec in k passes as a node does: each bucket of
// RankBuckets taken in input order (TakeRows), sorted (SortStable), and
// the buckets' rows concatenated.
func sortInPasses(t *testing.T, mem memory.Allocator, rec arrow.Record, k int) [][]any {
	t.Helper()
	buckets, err := RankBuckets(rec.Column(1), k)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for b := range k {
		var take []int32
		for i, x := range buckets {
			if int(x) == b {
				take = append(take, int32(i))
			}
		}
		part, err := TakeRows(mem, rec, take)
		if err != nil {
			t.Fatal(err)
		}
		sorted, err := SortStable(mem, part, "k")
		part.Release()
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rowsOf(sorted)...)
		sorted.Release()
	}
	return rows
}

func TestSortStableErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, nil, 3, []testCol{{"id", arrow.PrimitiveTypes.Int64, rowID}})
	defer rec.Release()
	if _, err := SortStable(mem, rec, "nope"); !errors.Is(err, ErrColumn) {
		t.Errorf("unknown column: %v", err)
	}
	for _, k := range []int{0, MaxPasses + 1} {
		if _, err := RankBuckets(rec.Column(0), k); !errors.Is(err, ErrSpec) {
			t.Errorf("RankBuckets into %d buckets: %v", k, err)
		}
	}
	if _, err := TakeRows(mem, rec, []int32{0, 3}); !errors.Is(err, ErrSpec) {
		t.Errorf("TakeRows past the end: %v", err)
	}
}

// TestGatherRunIsSlice: rows that are a run of one source's consecutive rows
// are a slice sharing its buffers; any other rows are copied; a type gather
// cannot build is refused either way; nothing leaks.
func TestGatherRunIsSlice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewInt64Builder(mem)
	for i := range 10 {
		b.Append(int64(i * 10))
	}
	src := b.NewArray()
	b.Release()
	defer src.Release()
	cases := []struct {
		rows  []int32
		share bool
		want  string
	}{
		{[]int32{3, 4, 5}, true, "[30 40 50]"},
		{[]int32{0}, true, "[0]"},
		{[]int32{3, 5}, false, "[30 50]"},
		{[]int32{4, 3}, false, "[40 30]"},
		{[]int32{3, 4, -1}, false, "[30 40 (null)]"},
	}
	for _, c := range cases {
		out, err := gather(mem, picker{srcs: [2]arrow.Array{src}, a: c.rows})
		if err != nil {
			t.Fatal(err)
		}
		shares := out.Data().Buffers()[1] == src.Data().Buffers()[1]
		if got := fmt.Sprint(out); got != c.want || shares != c.share {
			t.Errorf("rows %v: %s sharing the source's values %v, want %s sharing %v", c.rows, got, shares, c.want, c.share)
		}
		out.Release()
	}
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 10, Scale: 2})
	db.AppendEmptyValues(3)
	dec := db.NewArray()
	db.Release()
	defer dec.Release()
	if _, err := gather(mem, picker{srcs: [2]arrow.Array{dec}, a: []int32{0, 1}}); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("gathering a run of decimals: %v, want ErrUnsupportedType", err)
	}
}

// TestSortStableOfSortedIsItself: a record already in SortStable's order
// (equal keys in any order of their other columns, missing keys last) comes
// back as itself, not a copy; one that is not (a null before a present key,
// a descent) is sorted as any other.
func TestSortStableOfSortedIsItself(t *testing.T) {
	for i, tc := range sortCases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			rec := buildRecord(t, mem, rng, 300, []testCol{{"id", arrow.PrimitiveTypes.Int64, rowID}, {"k", tc.typ, tc.gen}})
			defer rec.Release()
			sorted, err := SortStable(mem, rec, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer sorted.Release()
			if sorted == rec {
				t.Fatal("300 random keys were in order already")
			}
			again, err := SortStable(mem, sorted, "k")
			if err != nil {
				t.Fatal(err)
			}
			defer again.Release()
			if again != sorted {
				t.Error("a sorted record was copied, not handed back")
			}
			checkSorted(t, mem, sorted)
		})
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, keys := range [][]any{{1, nil, 2}, {1, 3, 2}, {"b", "a"}} {
		n := 0
		rec := buildRecord(t, mem, rand.New(rand.NewPCG(1, 1)), len(keys), []testCol{{"id", arrow.PrimitiveTypes.Int64, rowID},
			{"k", typeOfKey(keys), func(*rand.Rand, int) any { n++; return keys[n-1] }}})
		got, err := SortStable(mem, rec, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got == rec {
			t.Errorf("keys %v: handed back as sorted", keys)
		}
		checkSorted(t, mem, rec)
		got.Release()
		rec.Release()
	}
}

// typeOfKey is the Arrow type of keys: string if the first is a string,
// else int64.
func typeOfKey(keys []any) arrow.DataType {
	if _, ok := keys[0].(string); ok {
		return arrow.BinaryTypes.String
	}
	return arrow.PrimitiveTypes.Int64
}
