package parquetio

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// autoSchema has compressible columns (small ints, repeated strings) and
// incompressible ones (random float64 bits, wide random ids, short random
// tags: snappy would shrink their PLAIN pages by their 4-byte lengths, but
// without a dictionary they are DELTA_LENGTH_BYTE_ARRAY, whose lengths take
// no bits here).
func autoSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "small", Type: arrow.PrimitiveTypes.Int64},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64},
		{Name: "word", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tag", Type: arrow.BinaryTypes.String},
	}, nil)
}

// autoRecord makes rows of autoSchema; with zeroVal the val column is all
// zeros (compressible).
func autoRecord(mem memory.Allocator, rows int, seed uint64, zeroVal bool) arrow.Record {
	b := array.NewRecordBuilder(mem, autoSchema())
	defer b.Release()
	rng := rand.New(rand.NewPCG(seed, 2))
	words := []string{"alpha", "beta", "gamma", "delta"}
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(rng.Int64N(100))
		v := math.Float64frombits(rng.Uint64() &^ (1 << 62)) // finite (exponent < 0x400), random bits
		if zeroVal {
			v = 0
		}
		b.Field(1).(*array.Float64Builder).Append(v)
		b.Field(2).(*array.StringBuilder).Append(words[i%len(words)])
		b.Field(3).(*array.Int64Builder).Append(int64(rng.Uint64()))
		b.Field(4).(*array.StringBuilder).Append(fmt.Sprintf("t%07d", rng.IntN(10_000_000)))
	}
	return b.NewRecord()
}

// withSmall returns plans with the small column's plan p.
func withSmall(plans map[string]colPlan, p colPlan) map[string]colPlan {
	plans = maps.Clone(plans)
	plans["small"] = p
	return plans
}

// all returns every column of autoSchema with c.
func all(c Compression) map[string]colPlan {
	p := colPlan{codec: c}
	return map[string]colPlan{"small": p, "val": p, "word": p, "id": p, "tag": p}
}

func TestAutoCompression(t *testing.T) {
	var (
		snappy, none = colPlan{codec: Snappy}, colPlan{codec: Uncompressed}
		// mostly distinct: no dictionary (random floats, random ids, random tags)
		noneND = colPlan{codec: Uncompressed, noDict: true}
		delta  = colPlan{codec: Uncompressed, delta: true}
		// strings without a dictionary: DELTA_LENGTH_BYTE_ARRAY
		tagND = colPlan{codec: Uncompressed, delta: true, noDict: true}
	)
	// small (100 values) keeps its dictionary, or without one is delta
	// encoded; word (4 values) keeps its dictionary
	chosen := map[string]colPlan{"small": snappy, "val": noneND, "word": snappy, "id": noneND, "tag": tagND}
	noDict := map[string]colPlan{"small": delta, "val": none, "word": {codec: Snappy, delta: true}, "id": none, "tag": delta}
	cases := []struct {
		name    string
		cfg     WriteConfig
		rows    []int // rows of each record; 0 rows is an empty record
		zeroVal bool  // the first record's val column is all zeros
		want    map[string]colPlan
	}{
		{"auto", WriteConfig{Compression: Auto}, []int{20000}, false, chosen},
		{"default is auto", WriteConfig{}, []int{20000}, false, chosen},
		{"auto no dictionary", WriteConfig{Compression: Auto, NoDictionary: true}, []int{20000}, false, noDict},
		// small's 100 values in 300 or 3000 rows: its dictionary page would
		// outweigh the bit it saves per value over delta's 8
		{"auto small record", WriteConfig{Compression: Auto}, []int{300}, false, withSmall(chosen, delta)},
		{"auto after an empty record", WriteConfig{Compression: Auto}, []int{0, 20000}, false, chosen},
		{"auto decides on the first record", WriteConfig{Compression: Auto, RowGroupRows: 5000}, []int{3000, 20000}, true,
			map[string]colPlan{"small": delta, "val": snappy, "word": snappy, "id": noneND, "tag": tagND}},
		{"auto empty file", WriteConfig{Compression: Auto}, nil, false, all(Snappy)},
		{"auto only empty records", WriteConfig{Compression: Auto}, []int{0, 0}, false, all(Snappy)},
		{"snappy", WriteConfig{Compression: Snappy}, []int{20000}, false, all(Snappy)},
		{"zstd", WriteConfig{Compression: Zstd}, []int{20000}, false, all(Zstd)},
		{"none", WriteConfig{Compression: Uncompressed}, []int{20000}, false, all(Uncompressed)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			path := filepath.Join(t.TempDir(), "f.parquet")
			defer assertMem(t, mem, path)
			var in []arrow.Record
			for i, n := range tc.rows {
				in = append(in, autoRecord(mem, n, uint64(i), tc.zeroVal && i == 0))
			}
			defer releaseRecs(in)
			got := writePlans(t, path, in, tc.cfg)
			if !maps.Equal(got, tc.want) {
				t.Errorf("plans %v, want %v", got, tc.want)
			}
			checkChunks(t, path, tc.want, !tc.cfg.NoDictionary && len(tc.rows) > 0)
			checkRoundTrip(t, mem, path, in)
		})
	}
}

// writePlans writes recs to path with cfg and returns the writer's column
// plans (and checks Codecs agrees with them).
func writePlans(t *testing.T, path string, recs []arrow.Record, cfg WriteConfig) map[string]colPlan {
	t.Helper()
	w := writeWith(t, path, autoSchema(), recs, cfg)
	for name, c := range w.Codecs() {
		if w.plans[name].codec != c {
			t.Errorf("Codecs()[%s] = %s, plan %v", name, c, w.plans[name])
		}
	}
	return w.plans
}

// checkChunks checks every column chunk in the file's metadata against
// want: its codec, DELTA_BINARY_PACKED where planned, and a dictionary
// page where the column keeps its dictionary (dict: the config's is on).
func checkChunks(t *testing.T, path string, want map[string]colPlan, dict bool) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	eachChunk(t, path, func(g int, cc *metadata.ColumnChunkMetaData) {
		name, p := cc.PathInSchema().String(), want[cc.PathInSchema().String()]
		if wc, _ := p.codec.codec(); cc.Compression() != wc {
			t.Errorf("row group %d column %s: codec %v, want %v", g, name, cc.Compression(), wc)
		}
		f, _ := autoSchema().FieldsByName(name)
		if d := slices.Contains(cc.Encodings(), deltaEncoding(f[0].Type.ID())); d != p.delta {
			t.Errorf("row group %d column %s: encodings %v, want delta %v", g, name, cc.Encodings(), p.delta)
		}
		if has, want := cc.HasDictionaryPage(), dict && !p.noDict && !p.delta; has != want {
			t.Errorf("row group %d column %s: dictionary page %v, want %v", g, name, has, want)
		}
	})
}

// TestDeltaLen: the estimate of DELTA_BINARY_PACKED sizes follows the
// deltas' widths.
func TestDeltaLen(t *testing.T) {
	seq := make([]int64, 1025)
	for i := range seq {
		seq[i] = int64(i) * 3 // constant delta: 0 bits per value
	}
	if n := deltaLen(seq); n > 10+8*14 {
		t.Errorf("constant deltas: %d bytes, want headers only", n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	small, wide := make([]int64, 1025), make([]int64, 1025)
	for i := range small {
		small[i], wide[i] = rng.Int64N(1<<20), int64(rng.Uint64())
	}
	if n := deltaLen(small); n < 1024*20/8 || n > 1024*22/8+10+8*14 {
		t.Errorf("20-bit values: %d bytes, want about 21 bits each", n)
	}
	if n := deltaLen(wide); n < 1024*63/8 {
		t.Errorf("random 64-bit values: %d bytes, want about 8 each", n)
	}
	if n := deltaLen([]int32{7}); n != 10 {
		t.Errorf("one value: %d bytes, want the header", n)
	}
}

// TestMostlyDistinct counts distinct values of each layout.
func TestMostlyDistinct(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := autoRecord(mem, 5000, 1, false)
	defer rec.Release()
	want := map[string]bool{"small": false, "val": true, "word": false, "id": true, "tag": true}
	for i, f := range rec.Schema().Fields() {
		if got := mostlyDistinct(rec.Column(i), autoSampleValues); got != want[f.Name] {
			t.Errorf("%s: %v, want %v", f.Name, got, want[f.Name])
		}
	}
	i32 := array.NewInt32Builder(mem)
	defer i32.Release()
	for i := range 100 {
		i32.Append(int32(i % 90)) // 90 of 100 distinct: at least 7/8
	}
	a := i32.NewArray()
	defer a.Release()
	if !mostlyDistinct(a, 100) || !mostlyDistinct(a, 50) {
		t.Errorf("90 of 100 int32 values distinct: want mostly distinct")
	}
	empty := array.NewSlice(a, 0, 0)
	defer empty.Release()
	if mostlyDistinct(empty, 100) {
		t.Errorf("an empty column is not mostly distinct")
	}
}

// checkRoundTrip reads path back and compares its rows with in.
func checkRoundTrip(t *testing.T, mem memory.Allocator, path string, in []arrow.Record) {
	t.Helper()
	out, err := ReadFile(context.Background(), path, mem, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecs(out)
	want, got := concatAll(t, mem, autoSchema(), in), concatAll(t, mem, autoSchema(), out)
	defer want.Release()
	defer got.Release()
	if !array.RecordEqual(want, got) {
		t.Fatalf("records differ: want %d rows, got %d", want.NumRows(), got.NumRows())
	}
}

// TestSample checks the sampled bytes of sliced arrays of each layout.
func TestSample(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := genRecord(mem, allTypes(), 1000, 3)
	defer rec.Release()
	slice := rec.NewSlice(13, 1000)
	defer slice.Release()
	var s sampler
	for i, f := range slice.Schema().Fields() {
		t.Run(f.Name, func(t *testing.T) {
			col := slice.Column(i)
			if got, want := len(s.sample(col, 1<<20, true)), plainSize(col); got != want {
				t.Errorf("whole sample %d bytes, want %d", got, want)
			}
			if got := len(s.sample(col, 256, true)); got > 256+maxRowBytes(col) {
				t.Errorf("256-byte sample %d bytes, want <= 256 + one row", got)
			}
			if !startsAtRow0(col, s.sample(col, 256, true)) {
				t.Error("sample does not start at row 0")
			}
		})
	}
}

// plainSize returns the bytes of a's values as sampled: the values buffer
// (bits for booleans), or each valid value with its 4-byte length.
func plainSize(a arrow.Array) int {
	if v, ok := a.(varWidth); ok {
		n := 0
		for i := range v.Len() {
			if v.IsValid(i) {
				n += 4 + v.ValueLen(i)
			}
		}
		return n
	}
	if a.DataType().ID() == arrow.BOOL {
		return (a.Data().Offset()+a.Len()+7)/8 - a.Data().Offset()/8
	}
	return a.DataType().(arrow.FixedWidthDataType).Bytes() * a.Len()
}

// maxRowBytes is the most bytes one row adds to a sample of a.
func maxRowBytes(a arrow.Array) int {
	v, ok := a.(varWidth)
	if !ok {
		return 0
	}
	n := 0
	for i := range v.Len() {
		n = max(n, 4+v.ValueLen(i))
	}
	return n
}

// startsAtRow0 reports whether the sample of a starts at its first row
// (row 0 must be valid; true for layouts it does not know).
func startsAtRow0(a arrow.Array, sample []byte) bool {
	switch v := a.(type) {
	case *array.Int64:
		return arrow.Int64Traits.CastFromBytes(sample)[0] == v.Value(0)
	case *array.String:
		return int(binary.LittleEndian.Uint32(sample)) == v.ValueLen(0) && string(sample[4:4+v.ValueLen(0)]) == v.Value(0)
	case *array.LargeBinary:
		return int(binary.LittleEndian.Uint32(sample)) == v.ValueLen(0) && string(sample[4:4+v.ValueLen(0)]) == string(v.Value(0))
	}
	return true
}

// keyedRecord makes rows of three int64 columns: key, sorted, each value
// repeated 4 times (as a partition of a join's output); small, 100 values
// in random order; nkey, nullable, the sorted i/4 with every 97th row null
// (rare nulls of small keys, which delta encoding would still shrink); and
// nkey32, nkey as a nullable int32.
func keyedRecord(mem memory.Allocator, rows int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "small", Type: arrow.PrimitiveTypes.Int64}, {Name: "nkey", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "nkey32", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range rows {
		key := int64(i/4) * 1000
		b.Field(0).(*array.Int64Builder).Append(key)
		b.Field(1).(*array.Int64Builder).Append(rng.Int64N(100))
		if i%97 == 3 {
			b.Field(2).AppendNull()
			b.Field(3).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(int64(i / 4))
			b.Field(3).(*array.Int32Builder).Append(int32(i / 4))
		}
	}
	return b.NewRecord()
}

// writeKeyed writes rows of keyedRecord with cfg to a new file; the record
// is released, and its allocator checked, when the test ends.
func writeKeyed(t *testing.T, rows int, cfg WriteConfig) (*Writer, arrow.Record, string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	path := filepath.Join(t.TempDir(), "f.parquet")
	t.Cleanup(func() { assertMem(t, mem, path) })
	rec := keyedRecord(mem, rows)
	t.Cleanup(rec.Release)
	return writeWith(t, path, rec.Schema(), []arrow.Record{rec}, cfg), rec, path
}

// TestDeltaBeatsDict: with dictionaries on, sorted keys that repeat take
// DELTA_BINARY_PACKED (smaller than their dictionary, and cheaper), a
// column of a few values keeps its dictionary, and a nullable column is
// never delta encoded (TestDeltaNeverNullable).
func TestDeltaBeatsDict(t *testing.T) {
	w, rec, _ := writeKeyed(t, 20000, WriteConfig{})
	delta := colPlan{codec: Uncompressed, delta: true}
	want := map[string]colPlan{"key": delta, "small": {codec: Snappy}, "nkey": {codec: Snappy}, "nkey32": delta}
	if !maps.Equal(w.plans, want) {
		t.Errorf("plans %v, want %v", w.plans, want)
	}
	for name, d := range map[string]int{"key": 5000, "small": 100} {
		i := rec.Schema().FieldIndices(name)[0]
		if got := countDistinct(rec.Column(i), autoSampleValues).estimate(int(rec.NumRows())); got < d*7/8 || got > d*9/8 {
			t.Errorf("%s: %d distinct values estimated, want about %d", name, got, d)
		}
	}
}

// TestDeltaNeverNullable: a nullable int64 column that delta encoding
// would shrink (sorted keys, with nulls) is not delta encoded, even without
// dictionaries, so the file reads back in batches that end inside pages:
// Arrow v15's int64 delta decoder fails such reads of a column with nulls.
// A nullable int32 column is delta encoded, and reads back.
func TestDeltaNeverNullable(t *testing.T) {
	w, rec, path := writeKeyed(t, 3000, WriteConfig{NoDictionary: true, RowGroupRows: 1000})
	if p := w.plans["nkey"]; p.delta {
		t.Errorf("nkey, nullable: plan %v, want no delta encoding", p)
	}
	for _, name := range []string{"key", "nkey32"} {
		if p := w.plans[name]; !p.delta {
			t.Errorf("%s: plan %v, want delta encoding", name, p)
		}
	}
	// Go memory: Arrow v15's delta decoders do not free their blocks' buffers
	out, err := ReadFile(context.Background(), path, memory.DefaultAllocator, 50)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecs(out)
	got := concatAll(t, memory.DefaultAllocator, rec.Schema(), out)
	defer got.Release()
	if !array.RecordEqual(got, rec) {
		t.Fatalf("read back in batches of 50: %d rows differ from the %d written", got.NumRows(), rec.NumRows())
	}
}

// TestDistinctSet counts like a map: words drawn from ranges small and
// large (many repeats, none), across resets of growing and shrinking size,
// and across a wrap of the set's generation.
func TestDistinctSet(t *testing.T) {
	var d distinctSet
	rng := rand.New(rand.NewPCG(7, 7))
	for round := range 300 {
		n := 1 + rng.IntN(3000)
		span := uint64(1 + rng.IntN(2*n))
		if round%3 == 0 {
			span = ^uint64(0)
		}
		if round == 100 {
			d.gen = ^uint32(0) - 1 // the next resets wrap
		}
		d.reset(n)
		want := map[uint64]struct{}{}
		for range n {
			w := rng.Uint64N(span)
			if round%5 == 0 {
				w <<= 40 // words that differ only in high bits
			}
			d.add(w)
			want[w] = struct{}{}
			if d.n != len(want) {
				t.Fatalf("round %d: %d distinct, want %d", round, d.n, len(want))
			}
		}
	}
	var fresh distinctSet // slots never used hold word 0
	fresh.reset(4)
	fresh.gen = ^uint32(0)
	fresh.reset(4) // wraps
	if fresh.add(0); fresh.n != 1 {
		t.Errorf("after a wrap of the generation: 0 counted as %d distinct, want 1", fresh.n)
	}
}

// TestCountDistinctReused: a sampler's count of a column does not depend
// on the columns it counted before (strings and integers, longer and
// shorter).
func TestCountDistinctReused(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	big, small := autoRecord(mem, 5000, 1, false), autoRecord(mem, 300, 2, false)
	defer big.Release()
	defer small.Release()
	s := samplers.Get().(*sampler)
	defer samplers.Put(s)
	for _, rec := range []arrow.Record{big, small, big, small} {
		for i, f := range rec.Schema().Fields() {
			var fresh sampler
			want := fresh.countDistinct(rec.Column(i), autoSampleValues)
			if got := s.countDistinct(rec.Column(i), autoSampleValues); got != want {
				t.Errorf("%s of %d rows: reused sampler counted %+v, a fresh one %+v", f.Name, rec.NumRows(), got, want)
			}
			if got := mapDistinct(rec.Column(i), autoSampleValues); want.seen > 0 && want.distinct != got {
				t.Errorf("%s of %d rows: %d distinct, a map counts %d", f.Name, rec.NumRows(), want.distinct, got)
			}
		}
	}
}

// mapDistinct counts the distinct values among the first limit non-null
// values of a, as strings of their printed form, in a Go map.
func mapDistinct(a arrow.Array, limit int) int {
	set := map[string]struct{}{}
	for i, seen := 0, 0; i < a.Len() && seen < limit; i++ {
		if a.IsNull(i) {
			continue
		}
		seen++
		set[a.ValueStr(i)] = struct{}{}
	}
	return len(set)
}

// BenchmarkPlanColumns chooses Auto's codecs for a partition of 16K rows
// (a 16M-row job's partition of 1000) with dictionaries on, as each of the
// job's thousand output files does before its first rows are written.
func BenchmarkPlanColumns(b *testing.B) {
	rec := autoRecord(memory.DefaultAllocator, 16<<10, 1, false)
	defer rec.Release()
	b.ReportAllocs()
	for b.Loop() {
		planColumns(rec.Schema(), Auto, false, rec)
	}
}
