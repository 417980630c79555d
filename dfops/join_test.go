package dfops

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// intKey draws keys in [0, domain) with 10% nulls and the value 7 in 30% of
// rows (a skewed key).
func intKey(domain int) gen {
	return func(rng *rand.Rand, _ int) any {
		switch p := rng.Float64(); {
		case p < 0.1:
			return nil
		case p < 0.4:
			return 7
		default:
			return rng.IntN(domain)
		}
	}
}

// floatKey draws float keys: integers like intKey, plus halves (matching no
// integer) and NaNs.
func floatKey(rng *rand.Rand, i int) any {
	switch p := rng.Float64(); {
	case p < 0.05:
		return math.NaN()
	case p < 0.15:
		return float64(rng.IntN(10)) + 0.5
	}
	if v := intKey(10)(rng, i); v != nil {
		return float64(v.(int))
	}
	return nil
}

func strKey(vals ...string) gen {
	return func(rng *rand.Rand, _ int) any {
		if rng.IntN(20) == 0 {
			return nil
		}
		return vals[rng.IntN(len(vals))]
	}
}

func rowID(_ *rand.Rand, i int) any   { return i }
func rowName(_ *rand.Rand, i int) any { return fmt.Sprintf("n%d", i) }
func rowFloat(rng *rand.Rand, i int) any {
	if i%9 == 0 {
		return nil
	}
	return float64(i) / 4
}

// joinCase is a pair of record shapes and a join of them.
type joinCase struct {
	name        string
	left, right []testCol
	spec        JoinSpec
	wantNames   []string
}

var joinCases = []joinCase{
	{
		name: "two keys, int64/int32 and string/large_string",
		left: []testCol{{"k", arrow.PrimitiveTypes.Int64, intKey(12)}, {"s", arrow.BinaryTypes.String, strKey("a", "b")},
			{"lv", arrow.PrimitiveTypes.Float64, rowFloat}, {"name", arrow.BinaryTypes.String, rowName}},
		right: []testCol{{"k", arrow.PrimitiveTypes.Int32, intKey(12)}, {"rv", arrow.PrimitiveTypes.Int64, rowID},
			{"name", arrow.BinaryTypes.String, rowName}, {"s", arrow.BinaryTypes.LargeString, strKey("a", "b", "c")}},
		spec:      JoinSpec{LeftOn: []string{"k", "s"}, RightOn: []string{"k", "s"}},
		wantNames: []string{"k", "s", "lv", "name_x", "rv", "name_y"},
	},
	{
		name:      "int64 and float64 keys with NaN, custom suffixes",
		left:      []testCol{{"k", arrow.PrimitiveTypes.Int64, intKey(10)}, {"v", arrow.PrimitiveTypes.Int64, rowID}},
		right:     []testCol{{"v", arrow.BinaryTypes.String, rowName}, {"k", arrow.PrimitiveTypes.Float64, floatKey}},
		spec:      JoinSpec{LeftOn: []string{"k"}, RightOn: []string{"k"}, Suffixes: [2]string{"_l", "_r"}},
		wantNames: []string{"k", "v_l", "v_r"},
	},
	{
		name:      "differently named keys uint16/int64 are both kept",
		left:      []testCol{{"lk", arrow.PrimitiveTypes.Uint16, intKey(15)}, {"x", arrow.PrimitiveTypes.Float64, rowFloat}},
		right:     []testCol{{"rk", arrow.PrimitiveTypes.Int64, intKey(15)}, {"lk", arrow.BinaryTypes.String, rowName}},
		spec:      JoinSpec{LeftOn: []string{"lk"}, RightOn: []string{"rk"}},
		wantNames: []string{"lk_x", "x", "rk", "lk_y"},
	},
	{
		name:      "binary and float32/float16 keys",
		left:      []testCol{{"b", arrow.BinaryTypes.Binary, strKey("x", "yy", "")}, {"f", arrow.PrimitiveTypes.Float32, floatKey}},
		right:     []testCol{{"f", arrow.FixedWidthTypes.Float16, floatKey}, {"b", arrow.BinaryTypes.Binary, strKey("x", "yy", "zzz")}},
		spec:      JoinSpec{LeftOn: []string{"b", "f"}, RightOn: []string{"b", "f"}},
		wantNames: []string{"b", "f"},
	},
	{
		// Most lead rows match one build row, as in a merge on the build
		// side's key: the lead side's columns are runs (slices, see gather).
		name:      "a key unique on the right",
		left:      []testCol{{"k", arrow.PrimitiveTypes.Int64, intKey(30)}, {"v", arrow.PrimitiveTypes.Float64, rowFloat}, {"name", arrow.BinaryTypes.String, rowName}},
		right:     []testCol{{"k", arrow.PrimitiveTypes.Int64, rowID}, {"w", arrow.BinaryTypes.String, rowName}},
		spec:      JoinSpec{LeftOn: []string{"k"}, RightOn: []string{"k"}},
		wantNames: []string{"k", "v", "name", "w"},
	},
}

// refJoin is the brute-force reference: a nested loop in the order the
// package documents. Keys compare as refKey does.
func refJoin(l, r [][]any, widths [2]int, lk, rk []int, merged []bool, how How) [][]any {
	var ps [][2]int
	if how == Right {
		for _, p := range nestedLoop(r, l, rk, lk, true, false) {
			ps = append(ps, [2]int{p[1], p[0]})
		}
	} else {
		ps = nestedLoop(l, r, lk, rk, how == Left || how == Outer, how == Outer)
	}
	var out [][]any
	for _, p := range ps {
		out = append(out, refRow(l, r, widths, lk, rk, merged, p))
	}
	return out
}

func nestedLoop(a, b [][]any, ak, bk []int, keepA, keepB bool) [][2]int {
	var ps [][2]int
	matchedB := make([]bool, len(b))
	for i, ra := range a {
		ka, okA := refKey(ra, ak)
		found := false
		for j, rb := range b {
			if kb, okB := refKey(rb, bk); okA && okB && ka == kb {
				ps, found, matchedB[j] = append(ps, [2]int{i, j}), true, true
			}
		}
		if !found && keepA {
			ps = append(ps, [2]int{i, -1})
		}
	}
	for j, m := range matchedB {
		if keepB && !m {
			ps = append(ps, [2]int{-1, j})
		}
	}
	return ps
}

// refRow builds the output row of pair p: left columns (a merged key takes
// the right key when there is no left row), then right columns without the
// merged keys.
func refRow(l, r [][]any, widths [2]int, lk, rk []int, merged []bool, p [2]int) []any {
	var row []any
	for c := range widths[0] {
		k := slices.Index(lk, c)
		switch {
		case p[0] >= 0:
			row = append(row, l[p[0]][c])
		case k >= 0 && merged[k]:
			row = append(row, r[p[1]][rk[k]])
		default:
			row = append(row, nil)
		}
	}
	for c := range widths[1] {
		if k := slices.Index(rk, c); k >= 0 && merged[k] {
			continue
		}
		row = append(row, pick(r, p[1], c))
	}
	return row
}

func pick(rows [][]any, i, c int) any {
	if i < 0 {
		return nil
	}
	return rows[i][c]
}

func TestHashJoinMatchesNestedLoop(t *testing.T) {
	sizes := [][2]int{{400, 150}, {150, 400}, {1, 300}, {0, 40}, {40, 0}}
	for ci, tc := range joinCases {
		for _, how := range []How{Inner, Left, Right, Outer} {
			for si, size := range sizes {
				name := fmt.Sprintf("%s/%s/%dx%d", tc.name, how, size[0], size[1])
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(ci), uint64(si)))
					checkJoin(t, rng, tc, how, size[0], size[1])
				})
			}
		}
	}
}

// checkJoin joins generated records (sliced by one row, so array offsets
// are exercised) and compares the rows, in order, with refJoin.
func checkJoin(t *testing.T, rng *rand.Rand, tc joinCase, how How, nl, nr int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	lfull, rfull := buildRecord(t, mem, rng, nl+1, tc.left), buildRecord(t, mem, rng, nr+1, tc.right)
	defer lfull.Release()
	defer rfull.Release()
	left, right := lfull.NewSlice(1, int64(nl+1)), rfull.NewSlice(1, int64(nr+1))
	defer left.Release()
	defer right.Release()
	spec := tc.spec
	spec.How = how
	got, err := HashJoin(mem, left, right, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if names := fieldNames(got.Schema()); !slices.Equal(names, tc.wantNames) {
		t.Fatalf("columns %v, want %v", names, tc.wantNames)
	}
	lk, rk, merged := refKeys(t, left.Schema(), right.Schema(), spec)
	widths := [2]int{len(tc.left), len(tc.right)}
	want := refJoin(rowsOf(left), rowsOf(right), widths, lk, rk, merged, how)
	compareRows(t, rowsOf(got), want)
}

func refKeys(t *testing.T, ls, rs *arrow.Schema, spec JoinSpec) (lk, rk []int, merged []bool) {
	for i := range spec.LeftOn {
		lk = append(lk, ls.FieldIndices(spec.LeftOn[i])[0])
		rk = append(rk, rs.FieldIndices(spec.RightOn[i])[0])
		merged = append(merged, spec.LeftOn[i] == spec.RightOn[i])
	}
	return lk, rk, merged
}

func compareRows(t *testing.T, got, want [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if g, w := rowString(got[i]), rowString(want[i]); g != w {
			t.Fatalf("row %d: got %s, want %s", i, g, w)
		}
	}
}

// firstCase builds records of nl and nr rows of joinCases[0] from seed;
// the test's cleanup releases them.
func firstCase(t *testing.T, mem memory.Allocator, seed uint64, nl, nr int) (left, right arrow.Record, spec JoinSpec) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	tc := joinCases[0]
	left, right = buildRecord(t, mem, rng, nl, tc.left), buildRecord(t, mem, rng, nr, tc.right)
	t.Cleanup(func() { left.Release(); right.Release() })
	return left, right, tc.spec
}

func TestHashJoinBatches(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after firstCase's release
	left, right, spec := firstCase(t, mem, 1, 500, 200)
	spec.How = Outer
	whole, err := HashJoin(mem, left, right, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Release()
	var got [][]any
	calls := 0
	err = HashJoinBatches(mem, left, right, spec, 77, func(rec arrow.Record) error {
		if calls++; rec.NumRows() > 77 || rec.NumRows() == 0 {
			t.Errorf("batch of %d rows", rec.NumRows())
		}
		got = append(got, rowsOf(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (whole.NumRows() + 76) / 77; int64(calls) != want {
		t.Errorf("%d batches, want %d", calls, want)
	}
	compareRows(t, got, rowsOf(whole))
	stop := errors.New("stop")
	if err := HashJoinBatches(mem, left, right, spec, 10, func(arrow.Record) error { return stop }); err != stop {
		t.Errorf("callback error: got %v", err)
	}
}

func TestHashJoinErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(3, 4))
	left := buildRecord(t, mem, rng, 5, []testCol{{"k", arrow.BinaryTypes.String, rowName}, {"a", arrow.PrimitiveTypes.Int64, rowID},
		{"a_x", arrow.PrimitiveTypes.Int64, rowID}})
	defer left.Release()
	right := buildRecord(t, mem, rng, 5, []testCol{{"k", arrow.PrimitiveTypes.Int64, rowID}, {"id", arrow.PrimitiveTypes.Int64, rowID},
		{"a", arrow.PrimitiveTypes.Uint64, rowID}, {"u", arrow.PrimitiveTypes.Uint64, rowID}, {"ts", &arrow.TimestampType{Unit: arrow.Second, TimeZone: "UTC"}, rowID}})
	defer right.Release()
	cases := []struct {
		name     string
		spec     JoinSpec
		sentinel error
		mention  []string
	}{
		{"string vs int64 key", JoinSpec{LeftOn: []string{"k"}, RightOn: []string{"k"}}, ErrKeyType, []string{`"k" (utf8)`, `"k" (int64)`}},
		{"int64 vs uint64 key", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"u"}}, ErrKeyType, []string{`"a" (int64)`, `"u" (uint64)`}},
		{"int64 vs timestamp key", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"ts"}}, ErrKeyType, []string{"timestamp"}},
		{"unknown left column", JoinSpec{LeftOn: []string{"nope"}, RightOn: []string{"k"}}, ErrColumn, []string{`"nope"`, "left"}},
		{"unknown right column", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"nope"}}, ErrColumn, []string{`"nope"`, "right"}},
		{"suffix makes a duplicate", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"id"}}, ErrColumn, []string{`"a_x"`}},
		{"key counts differ", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"id", "u"}}, ErrSpec, []string{"1 left"}},
		{"no keys", JoinSpec{}, ErrSpec, []string{"no key"}},
		{"key named twice", JoinSpec{LeftOn: []string{"a", "a"}, RightOn: []string{"id", "u"}}, ErrSpec, []string{"twice"}},
		{"bad how", JoinSpec{LeftOn: []string{"a"}, RightOn: []string{"id"}, How: "cross"}, ErrSpec, []string{"cross"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := HashJoin(mem, left, right, tc.spec)
			if err == nil {
				out.Release()
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tc.sentinel)
			}
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %s", err, m)
				}
			}
		})
	}
}

func TestCommonKeyType(t *testing.T) {
	ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
	p := arrow.PrimitiveTypes
	cases := []struct {
		name        string
		left, right arrow.DataType
		want        arrow.DataType // nil: refused
	}{
		{"same", p.Int32, p.Int32, p.Int32},
		{"int32 int64", p.Int32, p.Int64, p.Int64},
		{"int8 uint32", p.Int8, p.Uint32, p.Int64},
		{"uint8 uint64", p.Uint8, p.Uint64, p.Uint64},
		{"int64 uint64", p.Int64, p.Uint64, nil},
		{"float32 float64", p.Float32, p.Float64, p.Float64},
		{"int64 float32", p.Int64, p.Float32, p.Float64},
		{"float16 uint64", arrow.FixedWidthTypes.Float16, p.Uint64, p.Float64},
		{"string large_string", arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.String},
		{"binary large_binary", arrow.BinaryTypes.LargeBinary, arrow.BinaryTypes.Binary, arrow.BinaryTypes.Binary},
		{"string binary", arrow.BinaryTypes.String, arrow.BinaryTypes.Binary, nil},
		{"string int64", arrow.BinaryTypes.String, p.Int64, nil},
		{"bool int8", arrow.FixedWidthTypes.Boolean, p.Int8, nil},
		{"date32 date64", arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64, arrow.FixedWidthTypes.Date64},
		{"timestamp units", ts(arrow.Second, "UTC"), ts(arrow.Nanosecond, "UTC"), ts(arrow.Nanosecond, "UTC")},
		{"timestamp zones", ts(arrow.Second, "UTC"), ts(arrow.Second, "Europe/Paris"), nil},
		{"decimal", &arrow.Decimal128Type{Precision: 5, Scale: 1}, p.Int64, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CommonKeyType(tc.left, tc.right)
			if tc.want == nil {
				if !errors.Is(err, ErrKeyType) {
					t.Fatalf("got %v, %v; want ErrKeyType", got, err)
				}
				return
			}
			if err != nil || !arrow.TypeEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestHashJoinDateKeys joins date32 with date64 keys: one day is 86400000 ms.
func TestHashJoinDateKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	days := []any{1, 2, nil, 3}
	ms := []any{3 * 86400000, 86400000, nil, 5}
	left := buildRecord(t, mem, nil, 4, []testCol{{"d", arrow.FixedWidthTypes.Date32, func(_ *rand.Rand, i int) any { return days[i] }}})
	defer left.Release()
	right := buildRecord(t, mem, nil, 4, []testCol{{"d", arrow.FixedWidthTypes.Date64, func(_ *rand.Rand, i int) any { return ms[i] }},
		{"i", arrow.PrimitiveTypes.Int64, rowID}})
	defer right.Release()
	got, err := HashJoin(mem, left, right, JoinSpec{LeftOn: []string{"d"}, RightOn: []string{"d"}, How: Outer})
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := [][]any{{int64(86400000), int64(1)}, {int64(2 * 86400000), nil}, {nil, nil}, {int64(3 * 86400000), int64(0)},
		{nil, int64(2)}, {int64(5), int64(3)}}
	if !arrow.TypeEqual(got.Schema().Field(0).Type, arrow.FixedWidthTypes.Date64) {
		t.Errorf("key type %s, want date64", got.Schema().Field(0).Type)
	}
	compareRows(t, rowsOf(got), want)
}
