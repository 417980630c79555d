package table

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// raws turns Go values into JSON divisions.
func raws(vals ...any) []json.RawMessage {
	out := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		out[i], _ = json.Marshal(v)
	}
	return out
}

func TestRuleValidate(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "u", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)},
	}, nil)
	cases := []struct {
		name    string
		rule    Rule
		p       int
		wantErr error
		wantMsg string
	}{
		{"hash ok", Rule{Kind: Hash, Columns: []string{"i", "s"}}, 10, nil, ""},
		{"range ints ok", Rule{Kind: Range, Columns: []string{"i"}, Divisions: raws(-5, 0, 0, 7)}, 5, nil, ""},
		{"range strings ok", Rule{Kind: Range, Columns: []string{"s"}, Divisions: raws("a", "m")}, 3, nil, ""},
		{"range floats ok", Rule{Kind: Range, Columns: []string{"f"}, Divisions: raws(-1.5, 2)}, 3, nil, ""},
		{"range bool ok", Rule{Kind: Range, Columns: []string{"b"}, Divisions: raws(true)}, 2, nil, ""},
		{"range timestamp ok", Rule{Kind: Range, Columns: []string{"ts"}, Divisions: raws(1700000000000000)}, 2, nil, ""},
		{"column ok", Rule{Kind: Column, Columns: []string{"u"}}, 4, nil, ""},
		{"P zero", Rule{Kind: Hash, Columns: []string{"i"}}, 0, ErrBadRule, "0 partitions"},
		{"unknown kind", Rule{Kind: "modulo", Columns: []string{"i"}}, 2, ErrBadRule, `unknown kind "modulo"`},
		{"no columns", Rule{Kind: Hash}, 2, ErrBadRule, "names no column"},
		{"unknown column", Rule{Kind: Hash, Columns: []string{"nope"}}, 2, ErrBadRule, `column "nope"`},
		{"duplicate column", Rule{Kind: Hash, Columns: []string{"i", "i"}}, 2, ErrBadRule, `"i" listed twice`},
		{"unsupported type", Rule{Kind: Hash, Columns: []string{"l"}}, 2, ErrUnsupportedType, `column "l" has type list`},
		{"range two columns", Rule{Kind: Range, Columns: []string{"i", "f"}, Divisions: raws(1)}, 2, ErrBadRule, "exactly one column"},
		{"range too few divisions", Rule{Kind: Range, Columns: []string{"i"}, Divisions: raws(1)}, 3, ErrBadRule, "1 divisions for 3 partitions, want 2"},
		{"range string for int", Rule{Kind: Range, Columns: []string{"i"}, Divisions: raws("x")}, 2, ErrBadRule, "not a JSON number"},
		{"range float for int", Rule{Kind: Range, Columns: []string{"i"}, Divisions: raws(1.5)}, 2, ErrBadRule, "not an integer"},
		{"range int8 overflow", Rule{Kind: Range, Columns: []string{"i8"}, Divisions: raws(300)}, 2, ErrBadRule, "integer of 8 bits"},
		{"range negative uint", Rule{Kind: Range, Columns: []string{"u"}, Divisions: raws(-1)}, 2, ErrBadRule, "unsigned"},
		{"range number for string", Rule{Kind: Range, Columns: []string{"s"}, Divisions: raws(3)}, 2, ErrBadRule, "not a JSON string"},
		{"range descending", Rule{Kind: Range, Columns: []string{"i"}, Divisions: raws(5, 3)}, 3, ErrBadRule, "division 1 is below division 0"},
		{"range descending strings", Rule{Kind: Range, Columns: []string{"s"}, Divisions: raws("b", "a")}, 3, ErrBadRule, "must ascend"},
		{"hash with divisions", Rule{Kind: Hash, Columns: []string{"i"}, Divisions: raws(1)}, 2, ErrBadRule, "must not have divisions"},
		{"column float", Rule{Kind: Column, Columns: []string{"f"}}, 2, ErrUnsupportedType, "want an integer type"},
		{"column timestamp", Rule{Kind: Column, Columns: []string{"ts"}}, 2, ErrUnsupportedType, "want an integer type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.rule.Validate(schema, c.p)
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if !errors.Is(err, c.wantErr) || !strings.Contains(err.Error(), c.wantMsg) {
				t.Fatalf("error %v, want %v containing %q", err, c.wantErr, c.wantMsg)
			}
		})
	}
}

func TestRuleJSON(t *testing.T) {
	r := Rule{Kind: Range, Columns: []string{"k"}, Divisions: raws(1, 2)}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"range","columns":["k"],"divisions":[1,2]}`; string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
}

// refRange is the brute-force range partition: the count of divisions <= key.
func refRange[T any](key T, divs []T, le func(a, b T) bool) uint32 {
	n := 0
	for _, d := range divs {
		if le(d, key) {
			n++
		}
	}
	return uint32(n)
}

func TestRangeMatchesBruteForce(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(3, 4))
	ib := array.NewInt64Builder(mem)
	fb := array.NewFloat64Builder(mem)
	sb := array.NewStringBuilder(mem)
	defer ib.Release()
	defer fb.Release()
	defer sb.Release()
	const n = 5000
	for i := range n {
		if i%17 == 0 {
			ib.AppendNull()
			fb.AppendNull()
			sb.AppendNull()
			continue
		}
		ib.Append(rng.Int64N(40) - 20) // small domain: many keys equal a division
		if i%31 == 0 {
			fb.Append(math.NaN())
		} else {
			fb.Append(float64(rng.IntN(40)-20) / 2)
		}
		sb.Append(string(rune('a' + rng.IntN(26))))
	}
	ia, fa, sa := ib.NewArray(), fb.NewArray(), sb.NewArray()
	defer ia.Release()
	defer fa.Release()
	defer sa.Release()
	idiv := []int64{-10, -10, -3, 0, 5, 19}
	fdiv := []float64{-7.5, -1, 0, 0.5, 9}
	sdiv := []string{"c", "d", "q", "q", "x"}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: ia.DataType()}, {Name: "f", Type: fa.DataType()}, {Name: "s", Type: sa.DataType()},
	}, nil)
	rec := array.NewRecord(schema, []arrow.Array{ia, fa, sa}, n)
	defer rec.Release()
	for _, sl := range [][2]int64{{0, n}, {13, 4000}} {
		r := rec.NewSlice(sl[0], sl[1])
		checkRange(t, r, "i", idiv, func(a arrow.Array, i int) (int64, bool) {
			return a.(*array.Int64).Value(i), a.IsNull(i)
		}, func(a, b int64) bool { return a <= b })
		checkRange(t, r, "f", fdiv, func(a arrow.Array, i int) (float64, bool) {
			v := a.(*array.Float64).Value(i)
			return v, a.IsNull(i) || math.IsNaN(v) // NaN goes last, like null
		}, func(a, b float64) bool { return a <= b })
		checkRange(t, r, "s", sdiv, func(a arrow.Array, i int) (string, bool) {
			return a.(*array.String).Value(i), a.IsNull(i)
		}, func(a, b string) bool { return a <= b })
		r.Release()
	}
}

// checkRange compares a Range partitioner on column col with refRange.
func checkRange[T any](t *testing.T, rec arrow.Record, col string, divs []T, get func(arrow.Array, int) (T, bool), le func(a, b T) bool) {
	t.Helper()
	vals := make([]any, len(divs))
	for i, d := range divs {
		vals[i] = d
	}
	p := len(divs) + 1
	part, err := NewPartitioner(rec.Schema(), Rule{Kind: Range, Columns: []string{col}, Divisions: raws(vals...)}, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := part.Partition(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	arr := rec.Column(rec.Schema().FieldIndices(col)[0])
	for i := range got {
		v, null := get(arr, i)
		want := uint32(p - 1)
		if !null {
			want = refRange(v, divs, le)
		}
		if got[i] != want {
			t.Fatalf("column %s row %d (%v null=%v): partition %d, want %d", col, i, v, null, got[i], want)
		}
	}
}

func TestRangeFloatsAndNaN(t *testing.T) {
	mem := checkedMem(t)
	b := array.NewFloat32Builder(mem)
	defer b.Release()
	b.AppendValues([]float32{-2, -1, float32(math.Copysign(0, -1)), 0, 0.5, 1, float32(math.NaN()), 3}, nil)
	b.AppendNull()
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "f", Type: arr.DataType()}}, nil), []arrow.Array{arr}, -1)
	defer rec.Release()
	part, err := NewPartitioner(rec.Schema(), Rule{Kind: Range, Columns: []string{"f"}, Divisions: raws(-1, 0, 1)}, 4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := part.Partition(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{0, 1, 2, 2, 2, 3, 3, 3, 3} // -0 == 0; NaN and null last
	if !slices.Equal(got, want) {
		t.Fatalf("partitions %v, want %v", got, want)
	}
}

func TestColumnRule(t *testing.T) {
	mem := checkedMem(t)
	cases := []struct {
		name    string
		vals    []int64
		valid   []bool
		want    []uint32
		wantMsg string
	}{
		{"ok", []int64{0, 3, 1, 3}, nil, []uint32{0, 3, 1, 3}, ""},
		{"negative", []int64{0, -2, 1}, nil, nil, `row 1: value -2 not in [0, 4)`},
		{"too large", []int64{0, 1, 4}, nil, nil, `row 2: value 4 not in [0, 4)`},
		{"null", []int64{0, 1, 2}, []bool{true, false, true}, nil, `row 1 is null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := array.NewInt16Builder(mem)
			defer b.Release()
			for i, v := range c.vals {
				if c.valid != nil && !c.valid[i] {
					b.AppendNull()
				} else {
					b.Append(int16(v))
				}
			}
			arr := b.NewArray()
			defer arr.Release()
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "pid", Type: arr.DataType()}}, nil), []arrow.Array{arr}, -1)
			defer rec.Release()
			part, err := NewPartitioner(rec.Schema(), Rule{Kind: Column, Columns: []string{"pid"}}, 4)
			if err != nil {
				t.Fatal(err)
			}
			got, err := part.Partition(rec, make([]uint32, 0, 100))
			if c.wantMsg != "" {
				if !errors.Is(err, ErrBadPartition) || !strings.Contains(err.Error(), c.wantMsg) || !strings.Contains(err.Error(), `"pid"`) {
					t.Fatalf("error %v, want ErrBadPartition naming pid and %q", err, c.wantMsg)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("got %v %v, want %v", got, err, c.want)
			}
		})
	}
}

func TestColumnRuleUnsigned(t *testing.T) {
	mem := checkedMem(t)
	b := array.NewUint64Builder(mem)
	defer b.Release()
	b.AppendValues([]uint64{2, 0, math.MaxUint64}, nil)
	arr := b.NewArray()
	defer arr.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "p", Type: arr.DataType()}}, nil), []arrow.Array{arr}, -1)
	defer rec.Release()
	part, _ := NewPartitioner(rec.Schema(), Rule{Kind: Column, Columns: []string{"p"}}, 3)
	if _, err := part.Partition(rec, nil); !errors.Is(err, ErrBadPartition) || !strings.Contains(err.Error(), "18446744073709551615") {
		t.Fatalf("error %v, want ErrBadPartition naming the value", err)
	}
	s := rec.NewSlice(0, 2)
	defer s.Release()
	if got, err := part.Partition(s, nil); err != nil || !slices.Equal(got, []uint32{2, 0}) {
		t.Fatalf("got %v %v", got, err)
	}
}

func TestPartitionSchemaMismatch(t *testing.T) {
	mem := checkedMem(t)
	part, err := NewPartitioner(GenSchema(), Rule{Kind: Hash, Columns: []string{"key"}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	rec := randomRecord(mem, allSchema(), 3, rand.New(rand.NewPCG(1, 1)), 0)
	defer rec.Release()
	if _, err := part.Partition(rec, nil); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("error %v, want ErrSchemaMismatch", err)
	}
}

func TestPartitionReusesOut(t *testing.T) {
	mem := checkedMem(t)
	rec := GenTask(mem, GenConfig{Rows: 100, Seed: 1, PayloadBytes: 3}, 0, 1)
	defer rec.Release()
	part, _ := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: []string{"key", "name"}}, 8)
	buf := make([]uint32, 0, 200)
	got, err := part.Partition(rec, buf)
	if err != nil || len(got) != 100 || &got[0] != &buf[:1][0] {
		t.Fatalf("Partition did not reuse out: len %d err %v", len(got), err)
	}
}
