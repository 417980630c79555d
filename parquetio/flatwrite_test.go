package parquetio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// flatSchema has a column of every type the flat writer writes, required
// and nullable.
func flatSchema() *arrow.Schema {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float32,
		arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary}
	var fields []arrow.Field
	for _, dt := range types {
		fields = append(fields, arrow.Field{Name: dt.Name(), Type: dt}, arrow.Field{Name: dt.Name() + "_n", Type: dt, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// flatCase is a file for the flat writer: its values, how its records are
// cut, its row groups and its plans.
type flatCase struct {
	name      string
	ints      string // "random" (full range), "sorted", "small" or "extremes"
	nulls     int    // every nulls-th value of a nullable column is null (0: none, 1: all)
	recRows   []int  // rows of each record written
	groupRows int64
	delta     bool // integer columns DELTA_BINARY_PACKED
	dict      bool // the other columns dictionary-encoded (if it fits)
	codec     Compression
	sliced    bool // records are slices of larger ones (offsets not 0)
	// noArrow: Arrow v15's writer cannot write the file (it dereferences
	// nil on a delta column whose first values are null), so the metadata
	// are not compared with its
	noArrow bool
	// fallback: some dictionary passes its page's limit; Arrow's writer
	// then writes dictionary pages first and plain ones after, this
	// package's plain pages only, so their encodings differ
	fallback bool
}

func flatCases() []flatCase {
	many := make([]int, 60)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range many {
		many[i] = 1 + rng.IntN(900)
	}
	return []flatCase{
		{name: "plain", ints: "random", nulls: 7, recRows: []int{5000}, delta: false, codec: Uncompressed},
		{name: "plain-snappy", ints: "small", nulls: 3, recRows: []int{5000}, codec: Snappy},
		{name: "delta-sorted", ints: "sorted", nulls: 5, recRows: []int{4097}, delta: true, codec: Snappy},
		{name: "delta-random", ints: "random", nulls: 0, recRows: []int{1, 2, 127, 128, 129, 1000}, delta: true, codec: Uncompressed},
		{name: "delta-extremes", ints: "extremes", nulls: 2, recRows: []int{3000}, delta: true, codec: Snappy},
		{name: "all-null", ints: "small", nulls: 1, recRows: []int{100, 200}, codec: Snappy},
		{name: "all-null-delta", ints: "small", nulls: 1, recRows: []int{100, 200}, delta: true, codec: Snappy, noArrow: true},
		{name: "pages-and-groups", ints: "sorted", nulls: 11, recRows: []int{300000, 70000}, groupRows: 150000, delta: true, codec: Snappy},
		{name: "many-records", ints: "small", nulls: 4, recRows: many, groupRows: 9000, delta: true, codec: Uncompressed},
		{name: "sliced", ints: "random", nulls: 6, recRows: []int{2500, 1, 700}, groupRows: 1000, sliced: true, codec: Snappy},
		{name: "dict", ints: "small", nulls: 5, recRows: []int{3000, 2000}, dict: true, codec: Snappy},
		{name: "dict-runs", ints: "runs", nulls: 0, recRows: []int{10000}, dict: true, codec: Uncompressed},
		{name: "dict-delta", ints: "runs", nulls: 9, recRows: many, groupRows: 7000, dict: true, delta: true, codec: Snappy},
		{name: "dict-all-null", ints: "small", nulls: 1, recRows: []int{300}, dict: true, codec: Snappy},
		{name: "dict-one-value", ints: "one", nulls: 3, recRows: []int{300, 10}, dict: true, codec: Snappy},
		{name: "dict-sliced", ints: "small", nulls: 4, recRows: []int{999, 3}, groupRows: 500, sliced: true, dict: true, codec: Snappy},
		{name: "dict-fallback", ints: "random", nulls: 0, recRows: []int{200000}, dict: true, codec: Snappy, fallback: true},
	}
}

// intValue returns the i-th integer of a case.
func intValue(kind string, rng *rand.Rand, i int) int64 {
	switch kind {
	case "random":
		return int64(rng.Uint64())
	case "sorted":
		return int64(i)*3 + rng.Int64N(3)
	case "runs":
		return int64(i / 37)
	case "one":
		return 7
	case "extremes":
		return []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MinInt32, math.MaxInt32}[rng.IntN(6)]
	}
	return rng.Int64N(100) - 50
}

// flatRecord makes rows rows of flatSchema for c.
func flatRecord(c flatCase, rows int, seed uint64) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, flatSchema())
	defer b.Release()
	rng := rand.New(rand.NewPCG(seed, 2))
	floats := []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), 1.5, -2.25}
	for f, fb := range b.Fields() {
		nullable := f%2 == 1
		for i := range rows {
			if nullable && c.nulls > 0 && i%c.nulls == 0 {
				fb.AppendNull()
				continue
			}
			v := intValue(c.ints, rng, i)
			switch fb := fb.(type) {
			case *array.Int64Builder:
				fb.Append(v)
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Float32Builder:
				fb.Append(float32(floats[rng.IntN(len(floats))] * float64(v%1000)))
			case *array.Float64Builder:
				fb.Append(floats[rng.IntN(len(floats))] * float64(v%100000))
			case *array.StringBuilder:
				hex := fmt.Sprintf("%x", v)
				fb.Append(hex[:rng.IntN(len(hex)+1)])
			case *array.BinaryBuilder:
				fb.Append(binaryValue(rng))
			}
		}
	}
	return b.NewRecord()
}

// binaryValue is 0 to 40 random bytes, with zeros and 0xff among them.
func binaryValue(rng *rand.Rand) []byte {
	v := make([]byte, rng.IntN(41))
	for i := range v {
		v[i] = []byte{0, 0xff, byte(rng.Uint32())}[rng.IntN(3)]
	}
	return v
}

// flatRecords makes the records of c.
func flatRecords(c flatCase) []arrow.Record {
	var recs []arrow.Record
	for i, n := range c.recRows {
		if !c.sliced {
			recs = append(recs, flatRecord(c, n, uint64(i)))
			continue
		}
		whole := flatRecord(c, n+20, uint64(i))
		recs = append(recs, whole.NewSlice(13, 13+int64(n)))
		whole.Release()
	}
	return recs
}

// flatPlans are c's plans of flatSchema's columns.
func flatPlans(c flatCase) map[string]colPlan {
	plans := map[string]colPlan{}
	for _, f := range flatSchema().Fields() {
		p := colPlan{codec: c.codec, noDict: !c.dict}
		// as Auto: Arrow's writer fails on a nullable int64 delta column
		// whose page starts with nulls
		if c.delta && (f.Type.ID() == arrow.INT32 || f.Type.ID() == arrow.INT64 && !f.Nullable) {
			p.codec, p.delta, p.noDict = Uncompressed, true, true
		}
		// as Auto: strings and binaries without a dictionary
		if c.delta && !c.dict && (f.Type.ID() == arrow.STRING || f.Type.ID() == arrow.BINARY) {
			p.delta = true
		}
		plans[f.Name] = p
	}
	return plans
}

// writeFlatCase writes recs to path with the plans of c, by the flat writer
// or Arrow's.
func writeFlatCase(t testing.TB, path string, c flatCase, recs []arrow.Record, flat bool) {
	t.Helper()
	// The same plans for both writers.
	w, err := Create(path, flatSchema(), WriteConfig{RowGroupRows: c.groupRows, arrowWriter: !flat, arrowNullableDelta: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.startPlans(flatPlans(c), true); err != nil {
		t.Fatal(err)
	}
	if (w.flat != nil) != flat {
		t.Fatalf("flat writer used: %v, want %v", w.flat != nil, flat)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestFlatWriterMatchesArrow: files of every simple column type, required
// and nullable (no nulls, some, all), plain or delta-encoded, uncompressed
// or snappy, with full-range, sorted, small and extreme integers, NaNs and
// signed zeros, empty strings and binaries with zero bytes, written in one
// record or many, sliced records, several pages and row groups, read back
// by Arrow's reader alone and by this package's give the rows written; and
// their metadata (schema, key-value metadata, row groups, and each column
// chunk's codec, encodings, value count and statistics) equal those of the
// same rows written by Arrow's writer.
func TestFlatWriterMatchesArrow(t *testing.T) {
	for _, c := range flatCases() {
		t.Run(c.name, func(t *testing.T) {
			recs := flatRecords(c)
			defer releaseRecs(recs)
			want := concatAll(t, memory.DefaultAllocator, flatSchema(), recs)
			defer want.Release()
			dir := t.TempDir()
			ours, theirs := filepath.Join(dir, "flat.parquet"), filepath.Join(dir, "arrow.parquet")
			writeFlatCase(t, ours, c, recs, true)
			if !c.noArrow {
				writeFlatCase(t, theirs, c, recs, false)
			}

			got := readArrows(t, ours, flatSchema())
			if !sameRows(got, want) || !sameFields(got.Schema(), want.Schema()) {
				t.Fatalf("Arrow's reader reads other rows than were written")
			}
			got.Release()
			got = readOurs(t, ours, flatSchema(), 777)
			if !sameRows(got, want) {
				t.Fatalf("this package's reader reads other rows than were written")
			}
			got.Release()
			if c.noArrow {
				return
			}
			dicts, fallbacks := compareMetadata(t, ours, theirs, c.fallback)
			if c.dict && dicts == 0 || c.fallback && fallbacks == 0 {
				t.Fatalf("%d chunks with a dictionary, %d written plain where Arrow's writer fell back", dicts, fallbacks)
			}
		})
	}
}

// readOurs reads the file at path whole, in batches of batch rows, into
// one record of schema.
func readOurs(t *testing.T, path string, schema *arrow.Schema, batch int64) arrow.Record {
	t.Helper()
	recs, err := ReadFile(context.Background(), path, memory.DefaultAllocator, batch)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecs(recs)
	return concatAll(t, memory.DefaultAllocator, schema, recs)
}

// readArrows reads the file at path whole with Arrow's reader alone into
// one record of schema.
func readArrows(t *testing.T, path string, schema *arrow.Schema) arrow.Record {
	t.Helper()
	recs := arrowOnly(t, path, 1<<20)
	defer releaseRecs(recs)
	return concatAll(t, memory.DefaultAllocator, schema, recs)
}

// sameRows reports whether two records hold the same rows, floats compared
// bit for bit (so NaNs are equal, and -0 is not 0).
func sameRows(a, b arrow.Record) bool {
	if a.NumCols() != b.NumCols() || a.NumRows() != b.NumRows() {
		return false
	}
	for i, ca := range a.Columns() {
		cb := b.Column(i)
		if ca.NullN() != cb.NullN() {
			return false
		}
		var equal func(r int) bool
		switch ca := ca.(type) {
		case *array.Float64:
			equal = func(r int) bool {
				return math.Float64bits(ca.Value(r)) == math.Float64bits(cb.(*array.Float64).Value(r))
			}
		case *array.Float32:
			equal = func(r int) bool {
				return math.Float32bits(ca.Value(r)) == math.Float32bits(cb.(*array.Float32).Value(r))
			}
		default:
			if !array.Equal(ca, cb) {
				return false
			}
			continue
		}
		for r := range ca.Len() {
			if ca.IsValid(r) != cb.IsValid(r) || ca.IsValid(r) && !equal(r) {
				return false
			}
		}
	}
	return true
}

// sameFields reports whether two schemas have the same fields' names,
// types and nullability (Arrow's reader adds field IDs as metadata).
func sameFields(a, b *arrow.Schema) bool {
	return slices.EqualFunc(a.Fields(), b.Fields(), func(x, y arrow.Field) bool {
		return x.Name == y.Name && arrow.TypeEqual(x.Type, y.Type) && x.Nullable == y.Nullable
	})
}

// compareMetadata fails unless the files' metadata match (see
// TestFlatWriterMatchesArrow; with fallback, a chunk may be plain where
// Arrow's writer fell back from its dictionary), and returns how many
// chunks of ours have a dictionary, and how many are plain where Arrow's
// writer fell back.
func compareMetadata(t *testing.T, ours, theirs string, fallback bool) (dicts, fallbacks int) {
	t.Helper()
	a, b := openMeta(t, ours), openMeta(t, theirs)
	if !a.Schema.Equals(b.Schema) || !a.KeyValueMetadata().Equals(b.KeyValueMetadata()) {
		t.Fatalf("schema or key-value metadata differ:\n%v\n%v", a.Schema, b.Schema)
	}
	if a.NumRows != b.NumRows || len(a.RowGroups) != len(b.RowGroups) {
		t.Fatalf("%d rows in %d groups, Arrow's writer %d in %d", a.NumRows, len(a.RowGroups), b.NumRows, len(b.RowGroups))
	}
	for g := range a.RowGroups {
		ga, gb := a.RowGroup(g), b.RowGroup(g)
		if ga.NumRows() != gb.NumRows() {
			t.Fatalf("group %d: %d rows, Arrow's %d", g, ga.NumRows(), gb.NumRows())
		}
		for c := range ga.NumColumns() {
			ca, _ := ga.ColumnChunk(c)
			cb, _ := gb.ColumnChunk(c)
			where := fmt.Sprintf("group %d, column %s", g, ca.PathInSchema())
			sameEncodings := slices.Equal(ca.Encodings(), cb.Encodings()) && ca.HasDictionaryPage() == cb.HasDictionaryPage()
			if fallback && !sameEncodings {
				// a dictionary page, then plain ones; here plain only
				sameEncodings = slices.Equal(ca.Encodings(), []parquet.Encoding{parquet.Encodings.Plain, parquet.Encodings.RLE}) &&
					!ca.HasDictionaryPage() && cb.HasDictionaryPage() && slices.Contains(cb.Encodings(), parquet.Encodings.Plain)
				fallbacks++
			}
			if ca.HasDictionaryPage() {
				dicts++
			}
			if ca.Compression() != cb.Compression() || !sameEncodings || ca.NumValues() != cb.NumValues() || ca.FileOffset() != chunkStart(ca) {
				t.Fatalf("%s: codec %v, encodings %v, %d values, dictionary %v; Arrow's %v, %v, %d",
					where, ca.Compression(), ca.Encodings(), ca.NumValues(), ca.HasDictionaryPage(), cb.Compression(), cb.Encodings(), cb.NumValues())
			}
			compareStats(t, where, ca, cb)
		}
	}
	return dicts, fallbacks
}

// chunkStart is where a column chunk's first page begins: its dictionary
// page if it has one, else its first data page (the chunk's file offset).
func chunkStart(c *metadata.ColumnChunkMetaData) int64 {
	if c.HasDictionaryPage() {
		return c.DictionaryPageOffset()
	}
	return c.DataPageOffset()
}

// openMeta reads a file's metadata.
func openMeta(t *testing.T, path string) *metadata.FileMetaData {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.MetaData()
}

// compareStats fails unless two column chunks' statistics match.
func compareStats(t *testing.T, where string, a, b *metadata.ColumnChunkMetaData) {
	t.Helper()
	sa, errA := a.Statistics()
	sb, errB := b.Statistics()
	if errA != nil || errB != nil || (sa == nil) != (sb == nil) {
		t.Fatalf("%s: statistics %v (%v), Arrow's %v (%v)", where, sa, errA, sb, errB)
	}
	if sa == nil {
		return
	}
	if sa.HasMinMax() != sb.HasMinMax() || sa.HasNullCount() != sb.HasNullCount() || sa.NullCount() != sb.NullCount() ||
		!bytes.Equal(sa.EncodeMin(), sb.EncodeMin()) || !bytes.Equal(sa.EncodeMax(), sb.EncodeMax()) {
		t.Fatalf("%s: min %x max %x nulls %d (%v); Arrow's %x %x %d (%v)", where, sa.EncodeMin(), sa.EncodeMax(), sa.NullCount(),
			sa.HasMinMax(), sb.EncodeMin(), sb.EncodeMax(), sb.NullCount(), sb.HasMinMax())
	}
}

// TestFlatColumnsChoice: the flat writer takes only files whose every
// column is simple.
func TestFlatColumnsChoice(t *testing.T) {
	c := flatCase{codec: Snappy}
	cases := []struct {
		name   string
		schema *arrow.Schema
		plans  func(map[string]colPlan)
		cfg    WriteConfig
		want   bool
	}{
		{"simple", flatSchema(), nil, WriteConfig{}, true},
		{"dictionary", flatSchema(), func(p map[string]colPlan) { p["utf8"] = colPlan{codec: Snappy} }, WriteConfig{}, true},
		{"zstd", flatSchema(), func(p map[string]colPlan) { p["int64"] = colPlan{codec: Zstd, noDict: true} }, WriteConfig{}, false},
		{"delta string", flatSchema(), func(p map[string]colPlan) { p["utf8"] = colPlan{delta: true, noDict: true} }, WriteConfig{}, false},
		{"delta float", flatSchema(), func(p map[string]colPlan) { p["float64"] = colPlan{delta: true, noDict: true} }, WriteConfig{}, false},
		{"other type", allTypes(), nil, WriteConfig{NoDictionary: true, Compression: Snappy}, false},
		{"nested", arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil), nil, WriteConfig{NoDictionary: true, Compression: Snappy}, false},
	}
	for _, k := range cases {
		plans := map[string]colPlan{}
		if k.schema == flatSchema() || k.name == "simple" || len(k.schema.Fields()) == len(flatSchema().Fields()) {
			plans = flatPlans(c)
		}
		if k.plans != nil {
			k.plans(plans)
		}
		cfg := k.cfg.withDefaults()
		w := &Writer{schema: k.schema, cfg: cfg}
		f, err := newFlatWriter(bufio.NewWriter(io.Discard), k.schema, w.props(plans), plans, cfg)
		if err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
		if (f != nil) != k.want {
			t.Errorf("%s: flat %v, want %v", k.name, f != nil, k.want)
		}
	}
}

// TestDeltaRoundTrip: appendDelta's streams decode (by this package's
// decoder) to the values encoded, for int64 and int32 columns, lengths
// around block and miniblock edges, and values whose deltas wrap; an int32
// column's deltas take at most 32 bits each.
func TestDeltaRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, id := range []arrow.Type{arrow.INT64, arrow.INT32} {
		for _, n := range []int{0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 257, 1000, 4096} {
			for _, kind := range []string{"random", "sorted", "small", "extremes"} {
				vs := make([]int64, n)
				for i := range vs {
					vs[i] = intValue(kind, rng, i)
					if id == arrow.INT32 {
						vs[i] = int64(int32(vs[i]))
					}
				}
				enc := appendDelta(nil, id, vs)
				// an int32 block: its least delta, 4 widths, at most 32 bits a delta
				if blocks := (max(n, 1) + 126) / 128; id == arrow.INT32 && len(enc) > 30+blocks*(10+4+128*4) {
					t.Fatalf("%d %s int32 values took %d bytes: more than 32 bits a delta", n, kind, len(enc))
				}
				var scratch []byte
				got, err := decodeDelta(nil, enc, n, &scratch)
				if err != nil {
					t.Fatalf("%s, %d %s values: %v", id, n, kind, err)
				}
				for i := range vs {
					g := int64(got[i])
					if id == arrow.INT32 {
						g = int64(int32(g))
					}
					if g != vs[i] {
						t.Fatalf("%s, %d %s values: value %d is %d, want %d", id, n, kind, i, g, vs[i])
					}
				}
			}
		}
	}
}

// BenchmarkWriteFlat writes 1M rows of two int64 columns (delta), a
// float64 and a string column (snappy; plain, or dictionary-encoded: the
// string column has 1M/2 distinct values of the 1M rows, so its dictionary
// passes its page's limit and it falls back to plain), to a file, with the
// flat writer and with Arrow's.
func BenchmarkWriteFlat(b *testing.B) {
	rec := benchSimpleRecord(1 << 20)
	defer rec.Release()
	for _, dict := range []bool{false, true} {
		plans := map[string]colPlan{"key": {codec: Uncompressed, delta: true}, "id": {codec: Uncompressed, delta: true},
			"val": {codec: Snappy, noDict: !dict}, "tag": {codec: Snappy, noDict: !dict}}
		for _, flat := range []bool{true, false} {
			name := map[bool]string{true: "flat", false: "arrow"}[flat] + map[bool]string{false: "", true: "-dict"}[dict]
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "f.parquet")
				b.SetBytes(rec.NumRows() * 36)
				for b.Loop() {
					w, err := Create(path, rec.Schema(), WriteConfig{DeferSync: true, arrowWriter: !flat})
					if err != nil {
						b.Fatal(err)
					}
					if err := w.startPlans(plans, true); err != nil {
						b.Fatal(err)
					}
					if err := w.Write(rec); err != nil {
						b.Fatal(err)
					}
					if err := w.Commit(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestWriterRefusesNullsInRequired: a null in a column whose field is not
// nullable is an error naming the column, by either writer (Arrow's would
// write whatever the null's value slot holds).
func TestWriterRefusesNullsInRequired(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues([]int64{1, 2, 3}, []bool{true, false, true})
	col := b.NewArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, 3)
	defer rec.Release()
	for _, cfg := range []WriteConfig{{Compression: Snappy, NoDictionary: true}, {Compression: Zstd}} {
		dir := t.TempDir()
		w, err := Create(filepath.Join(dir, "f.parquet"), schema, cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = w.Write(rec)
		if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "column k is not nullable but holds 1 nulls") {
			t.Fatalf("%s: got %v", cfg.Compression, err)
		}
		w.Abort()
		assertOnlyFiles(t, dir)
	}
}

// FuzzFlatWriter writes rows derived from the input (an int64, an int32
// and a string column, nullable or not, plain, delta or dictionary,
// snappy or not, in row groups of 1 to 64 rows) with the flat writer and
// checks that Arrow's reader and this package's read them back.
func FuzzFlatWriter(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add(bytes.Repeat([]byte{0xff, 0, 0x80, 7}, 70))
	f.Add([]byte("\x37hello, parquet; hello, parquet; 0123456789abcdef"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		mode, group := data[0], int64(data[1]%64)+1
		nullable := mode&1 != 0
		schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: nullable},
			{Name: "j", Type: arrow.PrimitiveTypes.Int32, Nullable: nullable}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: nullable}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for k, v := range data[2:] {
			if nullable && v%5 == 0 {
				for _, fb := range b.Fields() {
					fb.AppendNull()
				}
				continue
			}
			w := int64(v) << (8 * (k % 8)) * int64(1-2*(k%3&1))
			b.Field(0).(*array.Int64Builder).Append(w)
			b.Field(1).(*array.Int32Builder).Append(int32(w) ^ int32(v))
			b.Field(2).(*array.StringBuilder).Append(string(data[k%len(data) : k%len(data)+int(v%7)%(len(data)-k%len(data)+1)]))
		}
		rec := b.NewRecord()
		defer rec.Release()
		codec := []Compression{Snappy, Uncompressed}[mode>>1&1]
		plans := map[string]colPlan{
			"i": {codec: codec, delta: mode&4 != 0 && !nullable, noDict: mode&8 == 0},
			"j": {codec: codec, delta: mode&4 != 0, noDict: mode&8 == 0},
			"s": {codec: codec, noDict: mode&8 == 0}}
		for name, p := range plans {
			if p.delta {
				p.noDict, p.codec = true, Uncompressed
				plans[name] = p
			}
		}
		path := filepath.Join(t.TempDir(), "f.parquet")
		w, err := Create(path, schema, WriteConfig{RowGroupRows: group})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.startPlans(plans, true); err != nil || w.flat == nil {
			t.Fatalf("flat writer not started: %v", err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		got := readArrows(t, path, schema)
		defer got.Release()
		if !array.RecordEqual(got, rec) {
			t.Fatalf("Arrow's reader reads other rows than were written")
		}
		ours := readOurs(t, path, schema, 17)
		defer ours.Release()
		if !array.RecordEqual(ours, rec) {
			t.Fatalf("this package's reader reads other rows than were written")
		}
	})
}

// TestArrowWriterNoNullableDelta: a file Arrow's writer writes (a date
// column makes it so) with a nullable int32 column whose first 2000 values
// are null, which Auto would delta-encode: Arrow v15's writer dereferences
// nil on such a column, so it gets plain snappy pages, and the rows read
// back are the rows written.
func TestArrowWriterNoNullableDelta(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range 5000 {
		if i < 2000 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
		}
		b.Field(1).(*array.Date32Builder).Append(arrow.Date32(i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "f.parquet")
	w := writeWith(t, path, schema, []arrow.Record{rec}, WriteConfig{})
	if w.flat != nil || w.Codecs()["n"] != Snappy {
		t.Fatalf("flat writer %v, codecs %v", w.flat != nil, w.Codecs())
	}
	eachChunk(t, path, func(_ int, cc *metadata.ColumnChunkMetaData) {
		if slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
			t.Errorf("column %s is delta-encoded", cc.PathInSchema())
		}
	})
	all := readOurs(t, path, schema, 1000)
	defer all.Release()
	if !array.RecordEqual(all, rec) {
		t.Fatal("the rows read back differ")
	}
}

// TestBytesMinMax: the least and greatest values (byteRange) of pages of binaries
// drawn from a few bytes (zeros and 0xff among them, lengths 0 to 12, so
// that many share their first 8 bytes or are prefixes of others) are those
// bytes.Compare finds, across pages and with nulls skipped.
func TestBytesMinMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	alphabet := []byte{0, 1, 'a', 'b', 0xff}
	for trial := range 300 {
		b := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
		n := 1 + rng.IntN(40)
		var lo, hi []byte
		for range n {
			if rng.IntN(8) == 0 {
				b.AppendNull()
				continue
			}
			v := make([]byte, rng.IntN(13))
			for i := range v {
				v[i] = alphabet[rng.IntN(len(alphabet))]
			}
			b.Append(v)
			if lo == nil || bytes.Compare(v, lo) < 0 {
				lo = v
			}
			if hi == nil || bytes.Compare(v, hi) > 0 {
				hi = v
			}
		}
		a := b.NewArray()
		b.Release()
		cut := rng.IntN(n + 1)
		var r byteRange
		r.addPage([]segment{{a: a, hi: cut}})
		r.addPage([]segment{{a: a, lo: cut, hi: n}})
		gotLo, gotHi := r.lo, r.hi
		if !bytes.Equal(gotLo, lo) || !bytes.Equal(gotHi, hi) || (gotLo == nil) != (lo == nil) {
			t.Fatalf("trial %d: min %x max %x, want %x %x", trial, gotLo, gotHi, lo, hi)
		}
		a.Release()
	}
}

// BenchmarkDictStrings builds the dictionary of a chunk of 1M short
// strings of 4000 distinct values (as a merge's tag column in one
// partition's file, scaled up).
func BenchmarkDictStrings(b *testing.B) {
	const n = 1 << 20
	bld := array.NewStringBuilder(memory.DefaultAllocator)
	rng := rand.New(rand.NewPCG(3, 3))
	for range n {
		bld.Append(fmt.Sprintf("tag-%06d", rng.IntN(4000)))
	}
	col := bld.NewArray()
	bld.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, n)
	col.Release()
	defer rec.Release()
	d := new(dictBuilder)
	b.SetBytes(int64(len(byteValues(rec.Column(0)))))
	for b.Loop() {
		d.reset(0, 1<<20)
		if !d.build([]arrow.Record{rec}, 0) || d.entries() != 4000 {
			b.Fatalf("a dictionary of %d entries, want 4000", d.entries())
		}
	}
}

// TestPageBufsShared: flat writers running at once, file after file, take
// page buffers from one pool; every file reads back as written (a buffer
// lent to two writers at once, or still in use when returned, would mix
// their pages), and a writer returns its buffers once, however often it is
// aborted.
func TestPageBufsShared(t *testing.T) {
	cases := flatCases()
	dir := t.TempDir()
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := g; i < len(cases); i += 4 {
				c := cases[i]
				recs := flatRecords(c)
				err := writeFlatFile(filepath.Join(dir, c.name+".parquet"), c, recs)
				releaseRecs(recs)
				if err != nil {
					errs <- fmt.Errorf("%s: %w", c.name, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		recs := flatRecords(c)
		want := concatAll(t, memory.DefaultAllocator, flatSchema(), recs)
		releaseRecs(recs)
		got := readOurs(t, filepath.Join(dir, c.name+".parquet"), flatSchema(), 1000)
		if !sameRows(got, want) {
			t.Errorf("%s: the file reads back other rows than were written", c.name)
		}
		got.Release()
		want.Release()
	}

	w, err := Create(filepath.Join(dir, "aborted.parquet"), flatSchema(), WriteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.startPlans(flatPlans(cases[0]), true); err != nil {
		t.Fatal(err)
	}
	flat := w.flat
	bufs := flat.pageBufs
	flat.abort()
	flat.abort()
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if flat.pageBufs != nil {
		t.Fatal("an aborted writer still holds its page buffers")
	}
	a, b := pageBufPool.Get().(*pageBufs), pageBufPool.Get().(*pageBufs)
	if a == bufs && b == bufs {
		t.Fatal("one writer's page buffers were returned twice")
	}
}

// writeFlatFile writes recs to path with the flat writer and c's plans.
func writeFlatFile(path string, c flatCase, recs []arrow.Record) error {
	w, err := Create(path, flatSchema(), WriteConfig{RowGroupRows: c.groupRows, arrowNullableDelta: true})
	if err != nil {
		return err
	}
	if err := w.startPlans(flatPlans(c), true); err != nil {
		return errors.Join(err, w.Abort())
	}
	if w.flat == nil {
		return errors.Join(errors.New("not written by the flat writer"), w.Abort())
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return errors.Join(err, w.Abort())
		}
	}
	return w.Commit()
}
