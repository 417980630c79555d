package dfops

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

func TestQuantilesUniform(t *testing.T) {
	sample := make([]int, 1000)
	for i := range sample {
		sample[i] = 999 - i
	}
	got := Quantiles(sample, nil, 10)
	want := []int{100, 200, 300, 400, 500, 600, 700, 800, 900}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if sample[0] != 999 {
		t.Error("Quantiles modified its input")
	}
}

// TestQuantilesDefinition checks the weighted-quantile property on random
// samples with duplicates and a skewed value: for division i, the weight
// strictly below it is at most i/n of the total and the weight up to and
// including it is more than i/n (unless it is the largest value).
func TestQuantilesDefinition(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 9))
		m, n := 1+rng.IntN(300), 2+rng.IntN(40)
		vals, weights := make([]float64, m), make([]float64, m)
		for i := range vals {
			vals[i], weights[i] = float64(rng.IntN(50)), 0.5+rng.Float64()
			if rng.IntN(10) < 3 {
				vals[i] = 7
			}
		}
		vals = append(vals, math.NaN())
		weights = append(weights, 100)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkQuantiles(t, vals, weights, n) })
	}
}

func checkQuantiles(t *testing.T, vals, weights []float64, n int) {
	divs := Quantiles(vals, weights, n)
	if len(divs) != n-1 || !slices.IsSorted(divs) {
		t.Fatalf("%d divisions %v for n=%d, want n-1 ascending", len(divs), divs, n)
	}
	total, top := 0.0, math.Inf(-1)
	for i, v := range vals {
		if !math.IsNaN(v) {
			total, top = total+weights[i], max(top, v)
		}
	}
	for i, d := range divs {
		below, upTo := 0.0, 0.0
		for j, v := range vals {
			if v < d {
				below += weights[j]
			}
			if v <= d {
				upTo += weights[j]
			}
		}
		q := total * float64(i+1) / float64(n)
		if below > q+1e-9 || upTo <= q-1e-9 && d != top {
			t.Fatalf("division %d = %v: weight below %.3f, up to %.3f, target %.3f of %.3f", i, d, below, upTo, q, total)
		}
	}
}

func TestQuantilesEdges(t *testing.T) {
	cases := []struct {
		name   string
		sample []float64
		n      int
		want   []float64
	}{
		{"empty", nil, 4, nil},
		{"only NaN", []float64{math.NaN()}, 4, nil},
		{"one partition", []float64{1, 2}, 1, nil},
		{"one value", []float64{5}, 3, []float64{5, 5}},
		{"skewed value repeats", []float64{1, 7, 7, 7, 7, 7, 7, 9}, 4, []float64{7, 7, 7}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quantiles(tc.sample, nil, tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSampleDivisionsBalance samples three arrays of different sizes (one
// sorted, one reversed, one random) and checks that the divisions are a
// valid range rule that cuts the whole data into parts near n equal shares.
func TestSampleDivisionsBalance(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sizes := []int{20000, 5000, 50000}
	gens := []gen{
		func(_ *rand.Rand, i int) any { return i },
		func(_ *rand.Rand, i int) any { return 100000 - i },
		func(rng *rand.Rand, _ int) any { return rng.IntN(100000) },
	}
	s, err := NewSample(arrow.PrimitiveTypes.Int64)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.Record
	for f, n := range sizes {
		rng := rand.New(rand.NewPCG(uint64(f), 1))
		rec := buildRecord(t, mem, rng, n, []testCol{{"k", arrow.PrimitiveTypes.Int64, withNulls(gens[f])}})
		defer rec.Release()
		recs = append(recs, rec)
		if _, err := s.Add(rec.Column(0), 1000, uint64(f)); err != nil {
			t.Fatal(err)
		}
	}
	const parts = 20
	divs, err := s.Divisions(parts)
	if err != nil {
		t.Fatal(err)
	}
	counts := rangeCounts(t, recs, divs, parts)
	nonNull := 0
	for _, c := range counts[:parts-1] {
		nonNull += c
	}
	for p, c := range counts[:parts-1] {
		if c > 2*nonNull/parts || c < nonNull/parts/2 {
			t.Errorf("partition %d holds %d rows, want about %d (divisions %s)", p, c, nonNull/parts, divs)
		}
	}
}

// rangeCounts partitions recs with a range rule on column "k".
func rangeCounts(t *testing.T, recs []arrow.Record, divs []json.RawMessage, parts int) []int {
	t.Helper()
	pt, err := table.NewPartitioner(recs[0].Schema(), table.Rule{Kind: table.Range, Columns: []string{"k"}, Divisions: divs}, parts)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, parts)
	for _, rec := range recs {
		pids, err := pt.Partition(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pids {
			counts[p]++
		}
	}
	return counts
}

func TestSampleDivisionsJSON(t *testing.T) {
	ts := &arrow.TimestampType{Unit: arrow.Millisecond}
	seq := func(vals ...any) gen { return func(_ *rand.Rand, i int) any { return vals[i%len(vals)] } }
	cases := []struct {
		name string
		typ  arrow.DataType
		gen  gen
		want string // JSON of 3 divisions (n = 4), or an error substring
	}{
		{"int64", arrow.PrimitiveTypes.Int64, seq(1, 2, 3, 4, nil), `[2,3,4]`},
		{"uint64", arrow.PrimitiveTypes.Uint64, seq(10, 20, 30, 40), `[20,30,40]`},
		{"float64 without infinities or NaN", arrow.PrimitiveTypes.Float64, seq(0.5, 1.5, math.Inf(1), 2.5, math.NaN(), 3.5), `[1.5,2.5,3.5]`},
		{"string skips invalid UTF-8", arrow.BinaryTypes.String, seq("a", "b", "\xff", "c", "d"), `["b","c","d"]`},
		{"bool", arrow.FixedWidthTypes.Boolean, seq(false, true), `[false,true,true]`},
		{"timestamp in stored unit", ts, seq(1000, 2000, 3000, 4000), `[2000,3000,4000]`},
		{"all null", arrow.PrimitiveTypes.Int64, seq(nil), "no non-null value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rec := buildRecord(t, mem, nil, 60, []testCol{{"k", tc.typ, tc.gen}})
			defer rec.Release()
			s, err := NewSample(tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Add(rec.Column(0), 100, 1); err != nil {
				t.Fatal(err)
			}
			divs, err := s.Divisions(4)
			if err != nil {
				if errors.Is(err, ErrEmptySample) && tc.want == "no non-null value" {
					return
				}
				t.Fatal(err)
			}
			if got, _ := json.Marshal(divs); string(got) != tc.want {
				t.Errorf("divisions %s, want %s", got, tc.want)
			}
			if err := (table.Rule{Kind: table.Range, Columns: []string{"k"}, Divisions: divs}).Validate(rec.Schema(), 4); err != nil {
				t.Errorf("not a valid range rule: %v", err)
			}
		})
	}
}

func TestSampleDeterministic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, rand.New(rand.NewPCG(5, 5)), 10000, []testCol{{"k", arrow.BinaryTypes.String, withNulls(rowName)}})
	defer rec.Release()
	var out [2]string
	for i := range out {
		s, _ := NewSample(arrow.BinaryTypes.String)
		n, err := s.Add(rec.Column(0), 300, 42)
		if err != nil || n == 0 || n > 300 {
			t.Fatalf("took %d values, %v", n, err)
		}
		divs, err := s.Divisions(8)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(divs)
		out[i] = string(b)
	}
	if out[0] != out[1] {
		t.Errorf("two samples with one seed differ: %s vs %s", out[0], out[1])
	}
	if _, err := NewSample(&arrow.Decimal128Type{Precision: 3}); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("decimal sample: %v", err)
	}
}

// TestSampleChunks checks that sampling a column in chunks (empty ones
// too) takes the values and weights that sampling it whole does, for
// numbers and for strings with nulls, whether k is below or above the
// rows.
func TestSampleChunks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(6, 6))
	for iter := range 60 {
		n := 1 + rng.IntN(3000)
		rec := buildRecord(t, mem, rng, n, []testCol{
			{"i", arrow.PrimitiveTypes.Int64, func(rng *rand.Rand, _ int) any { return rng.IntN(1 << 20) }},
			{"s", arrow.BinaryTypes.String, withNulls(rowName)}})
		var cuts []int64
		for c := int64(0); c < int64(n); c += int64(rng.IntN(n/3 + 2)) {
			cuts = append(cuts, c) // a repeated cut makes an empty chunk
		}
		cuts = append(cuts, int64(n))
		k := []int{1, 50, n, 2 * n}[iter%4]
		for ci := range 2 {
			col := rec.Column(ci)
			var chunks []arrow.Array
			for i := range len(cuts) - 1 {
				chunks = append(chunks, array.NewSlice(col, cuts[i], cuts[i+1]))
			}
			whole, _ := NewSample(col.DataType())
			parts, _ := NewSample(col.DataType())
			nw, err1 := whole.Add(col, k, uint64(iter))
			np, err2 := parts.AddChunks(chunks, k, uint64(iter))
			releaseAll(chunks)
			if err1 != nil || err2 != nil || nw != np || !slices.Equal(whole.ints, parts.ints) ||
				!slices.Equal(whole.strs, parts.strs) || !slices.Equal(whole.weights, parts.weights) {
				t.Fatalf("iter %d column %d (%d rows, %d chunks, k %d): whole took %d, chunks %d (%v, %v)",
					iter, ci, n, len(chunks), k, nw, np, err1, err2)
			}
		}
		rec.Release()
	}
}
