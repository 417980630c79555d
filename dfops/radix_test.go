package dfops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// radixTypes are the types radixIndices sorts.
var radixTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, &arrow.TimestampType{Unit: arrow.Nanosecond},
	arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
}

// TestRadixMatchesComparison checks that the radix sort gives exactly the
// comparison sort's order, for every type it takes, on random columns:
// lengths around radixMin and beyond, narrow and wide key ranges, many
// duplicates, nulls, sliced arrays, and NaN, ±0, ±Inf for floats.
func TestRadixMatchesComparison(t *testing.T) {
	for ti, typ := range radixTypes {
		t.Run(typ.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			for seed := range 144 {
				rng := rand.New(rand.NewPCG(uint64(ti), uint64(seed)))
				checkRadix(t, mem, rng, typ, seed)
			}
		})
	}
}

// checkRadix sorts one random column of typ both ways and compares.
func checkRadix(t *testing.T, mem memory.Allocator, rng *rand.Rand, typ arrow.DataType, seed int) {
	t.Helper()
	n := []int{0, 1, 2, 7, radixMin - 1, radixMin, rng.IntN(4 * radixMin), rng.IntN(20000)}[seed%8]
	vals, desc := randomKeys(rng, n, seed)
	arr := buildKeys(t, mem, typ, vals, nullRate(rng))
	defer arr.Release()
	cut := rng.IntN(n/4 + 1)
	part := array.NewSlice(arr, int64(cut), int64(n))
	defer part.Release()
	for _, a := range []arrow.Array{arr, part} {
		want, err := compareIndices(a)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := radixIndices(a)
		if !ok || !slices.Equal(got, want) {
			t.Fatalf("seed %d, %d rows (%s, %d nulls, offset %d): radix %v\nwant %v", seed, a.Len(), desc, a.NullN(), a.Data().Offset(), head(got), head(want))
		}
		viaAPI, err := SortIndices(a)
		if err != nil || !slices.Equal(viaAPI, want) {
			t.Fatalf("seed %d: SortIndices differs from the comparison sort (%v)", seed, err)
		}
	}
}

func head(v []int32) []int32 { return v[:min(len(v), 40)] }

// nullRate returns how often a row is null: never, sometimes, or always.
func nullRate(rng *rand.Rand) float64 {
	return []float64{0, 0, 0.1, 0.5, 1}[rng.IntN(5)]
}

// randomKeys makes n raw keys: integer bits in .i and a float in .f.
func randomKeys(rng *rand.Rand, n, seed int) ([]rawKey, string) {
	modes := []struct {
		name string
		gen  func() rawKey
	}{
		{"wide", func() rawKey { return rawKey{int64(rng.Uint64()), math.Float64frombits(rng.Uint64())} }},
		{"narrow", narrowKeys(rng)},
		{"duplicates", func() rawKey { v := rng.IntN(3) - 1; return rawKey{int64(v), float64(v)} }},
		{"special floats", func() rawKey { return rawKey{int64(rng.IntN(5)), specialFloat(rng)} }},
		{"clustered", clusteredKeys(rng)},
		{"normal", func() rawKey { return rawKey{int64(rng.NormFloat64() * 1e4), rng.NormFloat64() * 1e4} }},
	}
	m := modes[(seed/8)%len(modes)]
	vals := make([]rawKey, n)
	for i := range vals {
		vals[i] = m.gen()
	}
	return vals, m.name
}

// rawKey is one row's value before it is cast to the column's type.
type rawKey struct {
	i int64
	f float64
}

// narrowKeys returns a generator of keys in a narrow range at a random base.
func narrowKeys(rng *rand.Rand) func() rawKey {
	base, span := int64(rng.Uint64()), rng.Int64N(1<<20)+1
	fbase := rng.NormFloat64() * 1e9
	return func() rawKey {
		d := rng.Int64N(span)
		return rawKey{base + d, fbase + float64(d)/16}
	}
}

// clusteredKeys returns a generator of keys near three far-apart bases,
// so that wide keys share their top bits in runs.
func clusteredKeys(rng *rand.Rand) func() rawKey {
	bases := []int64{int64(rng.Uint64()), int64(rng.Uint64()), int64(rng.Uint64())}
	return func() rawKey {
		b, d := bases[rng.IntN(3)], rng.Int64N(1<<12)
		return rawKey{b + d, math.Float64frombits(uint64(b)) * (1 + float64(d)*1e-15)}
	}
}

func specialFloat(rng *rand.Rand) float64 {
	s := []float64{math.NaN(), 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), -1.5, -1e300, 1e-310,
		-math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 2.5, -2.5, 65504, -65504}
	return s[rng.IntN(len(s))]
}

// buildKeys makes an array of typ from vals, each null with probability rate.
func buildKeys(t *testing.T, mem memory.Allocator, typ arrow.DataType, vals []rawKey, rate float64) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	rng := rand.New(rand.NewPCG(uint64(len(vals)), 7))
	for _, v := range vals {
		if rng.Float64() < rate {
			b.AppendNull()
			continue
		}
		if err := appendKey(b, v); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewArray()
}

// appendKey appends v cast to b's type.
func appendKey(b array.Builder, v rawKey) error {
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.i))
	case *array.Int16Builder:
		b.Append(int16(v.i))
	case *array.Int32Builder:
		b.Append(int32(v.i))
	case *array.Int64Builder:
		b.Append(v.i)
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.i))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v.i))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.i))
	default:
		return appendOtherKey(b, v)
	}
	return nil
}

// appendOtherKey is appendKey for unsigned, bool and float builders.
func appendOtherKey(b array.Builder, v rawKey) error {
	switch b := b.(type) {
	case *array.Uint8Builder:
		b.Append(uint8(v.i))
	case *array.Uint16Builder:
		b.Append(uint16(v.i))
	case *array.Uint32Builder:
		b.Append(uint32(v.i))
	case *array.Uint64Builder:
		b.Append(uint64(v.i))
	case *array.BooleanBuilder:
		b.Append(v.i&1 == 1)
	case *array.Float16Builder:
		b.Append(float16.New(float32(v.f)))
	case *array.Float32Builder:
		b.Append(float32(v.f))
	case *array.Float64Builder:
		b.Append(v.f)
	default:
		return fmt.Errorf("no test values for %T", b)
	}
	return nil
}

// TestRadixRejectsStrings checks that strings stay on the comparison sort.
func TestRadixRejectsStrings(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]string{"b", "a"}, nil)
	arr := b.NewArray()
	defer arr.Release()
	if _, ok := radixIndices(arr); ok {
		t.Error("radix took a string array")
	}
}

func TestFloatRadixKeyOrder(t *testing.T) {
	fs := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1)}
	for i := 1; i < len(fs); i++ {
		if floatRadixKey(fs[i-1]) >= floatRadixKey(fs[i]) {
			t.Errorf("key(%g) >= key(%g)", fs[i-1], fs[i])
		}
	}
	if floatRadixKey(math.Copysign(0, -1)) != floatRadixKey(0) {
		t.Error("-0 and +0 have different keys")
	}
}
