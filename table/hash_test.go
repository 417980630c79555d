package table

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// hashCases lists the key column sets the hash tests cover: every column
// alone and a few combinations.
func hashCases(schema *arrow.Schema) [][]string {
	var cases [][]string
	for _, f := range schema.Fields() {
		cases = append(cases, []string{f.Name})
	}
	n := schema.Fields()
	return append(cases,
		[]string{n[3].Name, n[12].Name},
		[]string{n[12].Name, n[3].Name},
		[]string{n[10].Name, n[11].Name, n[14].Name, n[18].Name},
	)
}

// refPartitions computes partitions with the reference hash.
func refPartitions(t *testing.T, rec arrow.Record, names []string, p int) []uint32 {
	t.Helper()
	var cols []int
	for _, n := range names {
		cols = append(cols, rec.Schema().FieldIndices(n)[0])
	}
	out := make([]uint32, rec.NumRows())
	for i := range out {
		h, null := refRowHash(rec, cols, i)
		if !null {
			out[i] = refPartition(h, p)
		}
	}
	return out
}

func TestHashMatchesReference(t *testing.T) {
	mem := checkedMem(t)
	schema := allSchema()
	rng := rand.New(rand.NewPCG(1, 2))
	full := randomRecord(mem, schema, 3000, rng, 0.1)
	defer full.Release()
	sliced := full.NewSlice(17, 2900)
	defer sliced.Release()
	for _, rec := range []arrow.Record{full, sliced} {
		for _, cols := range hashCases(schema) {
			for _, p := range []int{1, 7, 1000, 1 << 31} {
				part, err := NewPartitioner(schema, Rule{Kind: Hash, Columns: cols}, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := part.Partition(rec, nil)
				if err != nil {
					t.Fatal(err)
				}
				want := refPartitions(t, rec, cols, p)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("cols %v P=%d rows=%d: row %d in partition %d, reference says %d", cols, p, rec.NumRows(), i, got[i], want[i])
					}
				}
			}
		}
	}
}

// goldenRecord builds a fixed record with edge values of every type; row 7
// is null in every column.
func goldenRecord(mem memory.Allocator) arrow.Record {
	ints := []int64{0, 1, -1, 42, 1000, math.MinInt64, math.MaxInt64}
	uints := []uint64{0, 1, 42, 255, 1000, 1 << 63, math.MaxUint64}
	floats := []float64{0, math.Copysign(0, -1), math.NaN(), 1.5, -1.5, math.Inf(1), 1e300}
	strs := []string{"", "a", "abcdefgh", "abcdefghi", "h\u00e9llo", "0123456789012345678901234567890123456789", "0"}
	b := array.NewRecordBuilder(mem, allSchema())
	defer b.Release()
	for c := range allTypes {
		fb := b.Field(c)
		for i := range 7 {
			appendGolden(fb, ints[i], uints[i], floats[i], strs[i])
		}
		fb.AppendNull()
	}
	return b.NewRecord()
}

// appendGolden appends the golden value of fb's type.
func appendGolden(fb array.Builder, i int64, u uint64, f float64, s string) {
	switch b := fb.(type) {
	case *array.Int8Builder:
		b.Append(int8(i))
	case *array.Int16Builder:
		b.Append(int16(i))
	case *array.Int32Builder:
		b.Append(int32(i))
	case *array.Int64Builder:
		b.Append(i)
	case *array.Uint8Builder:
		b.Append(uint8(u))
	case *array.Uint16Builder:
		b.Append(uint16(u))
	case *array.Uint32Builder:
		b.Append(uint32(u))
	case *array.Uint64Builder:
		b.Append(u)
	case *array.Float16Builder:
		b.Append(float16.New(float32(f)))
	case *array.Float32Builder:
		b.Append(float32(f))
	case *array.Float64Builder:
		b.Append(f)
	case *array.BooleanBuilder:
		b.Append(i%2 != 0)
	case *array.StringBuilder:
		b.Append(s)
	case *array.LargeStringBuilder:
		b.Append(s)
	case *array.BinaryBuilder:
		b.Append([]byte(s))
	case *array.Date32Builder:
		b.Append(arrow.Date32(int32(i)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(i))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(i))
	}
}

// goldenCase is one entry of testdata/hash_golden.json: for the rows of
// goldenRecord, the 64-bit row hash (hex, "null" where a key is null) and
// the partitions for P = 7 and P = 1000.
type goldenCase struct {
	Columns []string `json:"columns"`
	Hashes  []string `json:"hashes"`
	P7      []uint32 `json:"p7"`
	P1000   []uint32 `json:"p1000"`
}

// computeGolden computes a golden case with the package's code.
func computeGolden(t *testing.T, rec arrow.Record, cols []string) goldenCase {
	g := goldenCase{Columns: cols}
	n := int(rec.NumRows())
	acc := make([]uint64, n)
	for k, name := range cols {
		c := rec.Schema().FieldIndices(name)[0]
		ct, _ := typeOf(rec.Column(c).DataType())
		hashColumn(rec.Column(c), ct, 0, acc, k > 0)
	}
	for i, h := range acc {
		g.Hashes = append(g.Hashes, fmt.Sprintf("%016x", h))
		for _, name := range cols {
			if rec.Column(rec.Schema().FieldIndices(name)[0]).IsNull(i) {
				g.Hashes[i] = "null"
			}
		}
	}
	for _, p := range []int{7, 1000} {
		part, err := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: cols}, p)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := part.Partition(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p == 7 {
			g.P7 = pids
		} else {
			g.P1000 = pids
		}
	}
	return g
}

func TestHashGolden(t *testing.T) {
	mem := checkedMem(t)
	rec := goldenRecord(mem)
	defer rec.Release()
	var got []goldenCase
	for _, cols := range hashCases(rec.Schema()) {
		got = append(got, computeGolden(t, rec, cols))
	}
	path := filepath.Join("testdata", "hash_golden.json")
	if *update {
		if err := os.WriteFile(path, marshalLines(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once to create it)", err)
	}
	var want []goldenCase
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%d golden cases, computed %d", len(want), len(got))
	}
	for i := range want {
		w, g := fmt.Sprint(want[i]), fmt.Sprint(got[i])
		if w != g {
			t.Errorf("hash changed for %v:\n got %s\nwant %s", want[i].Columns, g, w)
		}
	}
}

// TestHashKnownValues pins a few values by hand, independent of the golden
// file: fmix64 test vectors and the hash of small inputs.
func TestHashKnownValues(t *testing.T) {
	cases := []struct {
		name string
		got  uint64
		want uint64
	}{
		{"fmix64(0)", fmix64(0), 0},
		{"fmix64(1)", fmix64(1), 0xB456BCFC34C2CB2C},
		{"int 0 = bytes of 8 zeros", hashWord(0), hashBytes(make([]byte, 8))},
		{"int 0 = reference", hashWord(0), refHash(make([]byte, 8))},
		{"empty", hashBytes(nil), refFmix(0x9E3779B97F4A7C15)},
		{"abc", hashBytes([]byte("abc")), refFmix(0x9E3779B97F4A7C15 ^ 3 ^ 0x636261)},
		{"canon -0", canonFloat(math.Copysign(0, -1)), 0},
		{"canon NaN", canonFloat(-math.NaN()), 0x7FF8000000000000},
		{"reduce top", uint64(reduce(math.MaxUint64, 1000)), 999},
		{"reduce bottom", uint64(reduce(0, 1000)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %#x, want %#x", c.got, c.want)
			}
		})
	}
}

// chiSquare returns the chi-square statistic of counts against a uniform
// distribution.
func chiSquare(counts []int, total int) float64 {
	exp := float64(total) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - exp
		x += d * d / exp
	}
	return x
}

func TestHashUniform(t *testing.T) {
	mem := checkedMem(t)
	const rows, parts = 200_000, 100
	cases := []struct {
		name string
		gen  func(i int) any
	}{
		{"sequential int64", func(i int) any { return int64(i) }},
		{"strided int64", func(i int) any { return int64(i) << 20 }},
		{"short strings", func(i int) any { return fmt.Sprint(i) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := uniformRecord(mem, rows, c.gen)
			defer rec.Release()
			part, err := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: []string{"k"}}, parts)
			if err != nil {
				t.Fatal(err)
			}
			pids, err := part.Partition(rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int, parts)
			for _, p := range pids {
				counts[p]++
			}
			// 99 degrees of freedom: mean 99, sd 14; 200 is > 7 sd.
			if x := chiSquare(counts, rows); x > 200 {
				t.Errorf("chi-square %.1f over %d partitions, want < 200", x, parts)
			}
		})
	}
}

// uniformRecord builds a one-column record "k" of int64 or string values.
func uniformRecord(mem memory.Allocator, n int, gen func(int) any) arrow.Record {
	dt := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if _, ok := gen(0).(string); ok {
		dt = arrow.BinaryTypes.String
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt}}, nil))
	defer b.Release()
	for i := range n {
		switch v := gen(i).(type) {
		case int64:
			b.Field(0).(*array.Int64Builder).Append(v)
		case string:
			b.Field(0).(*array.StringBuilder).Append(v)
		}
	}
	return b.NewRecord()
}

// marshalLines renders a JSON array with one element per line.
func marshalLines[T any](items []T) []byte {
	out := []byte("[\n")
	for i, it := range items {
		b, _ := json.Marshal(it)
		out = append(out, b...)
		if i < len(items)-1 {
			out = append(out, ',')
		}
		out = append(out, '\n')
	}
	return append(out, "]\n"...)
}
