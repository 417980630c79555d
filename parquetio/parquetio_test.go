package parquetio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
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
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/shufflenode/shufflenode/table"
)

// allTypes has one column of every type the shuffle supports that survives
// a trip through Parquet in Arrow Go v15 (not float16, which Parquet cannot
// store, nor date64, which comes back as timestamp[ms], nor zone-less
// timestamps, which come back with zone UTC).
func allTypes() *arrow.Schema {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary,
		arrow.FixedWidthTypes.Date32,
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"},
	}
	fields := make([]arrow.Field, len(types))
	for i, dt := range types {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%02d_%s", i, dt.Name()), Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// genRecord makes rows pseudo-random rows of schema, every 7th value of a
// nullable field null.
func genRecord(mem memory.Allocator, schema *arrow.Schema, rows int, seed uint64) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(seed, 1))
	for f, fb := range b.Fields() {
		for i := range rows {
			if i%7 == 3 && schema.Field(f).Nullable {
				fb.AppendNull()
				continue
			}
			appendValue(fb, rng.Int64N(1<<40))
		}
	}
	return b.NewRecord()
}

// appendValue appends a value derived from v to a builder of any tested type.
func appendValue(fb array.Builder, v int64) {
	switch b := fb.(type) {
	case *array.Int8Builder:
		b.Append(int8(v))
	case *array.Int16Builder:
		b.Append(int16(v))
	case *array.Int32Builder:
		b.Append(int32(v))
	case *array.Int64Builder:
		b.Append(v)
	case *array.Uint8Builder:
		b.Append(uint8(v))
	case *array.Uint16Builder:
		b.Append(uint16(v))
	case *array.Uint32Builder:
		b.Append(uint32(v))
	case *array.Uint64Builder:
		b.Append(uint64(v))
	case *array.Float32Builder:
		b.Append(float32(v) / 3)
	case *array.Float64Builder:
		b.Append(float64(v) / 3)
	case *array.BooleanBuilder:
		b.Append(v%2 == 0)
	case *array.StringBuilder:
		b.Append(fmt.Sprintf("s%x", v))
	case *array.LargeStringBuilder:
		b.Append(fmt.Sprintf("L%x", v))
	case *array.BinaryBuilder:
		b.Append([]byte(fmt.Sprintf("b%x", v%1000)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v % 100000))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v % 100000 * 86400000))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v))
	default:
		panic(fmt.Sprintf("appendValue: builder %T", fb))
	}
}

func concatAll(t *testing.T, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) arrow.Record {
	t.Helper()
	if len(recs) == 0 {
		cols := emptyColumns(mem, schema)
		defer func() {
			for _, c := range cols {
				c.Release()
			}
		}()
		return array.NewRecord(schema, cols, 0)
	}
	rec, err := table.Concat(mem, recs)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func emptyColumns(mem memory.Allocator, schema *arrow.Schema) []arrow.Array {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	return cols
}

// assertMem fails unless mem holds nothing but what Arrow v15's readers
// of DELTA_BINARY_PACKED pages keep: such a decoder never frees its 64-byte
// buffer of miniblock bit widths (deltaBitPackDecoder.deltaBitWidths), which
// Go's allocator collects and a CheckedAllocator reports. At most that much
// per delta-encoded column chunk of the file at path (if any) is allowed.
func assertMem(t *testing.T, mem *memory.CheckedAllocator, path string) {
	t.Helper()
	allowed := 64 * deltaChunks(t, path)
	if got := mem.CurrentAlloc(); got > allowed {
		mem.AssertSize(t, 0) // reports what leaked
	}
}

// deltaChunks counts the column chunks of the file at path that use
// DELTA_BINARY_PACKED (0 if there is no file).
func deltaChunks(t *testing.T, path string) int {
	t.Helper()
	n := 0
	eachChunk(t, path, func(_ int, cc *metadata.ColumnChunkMetaData) {
		if slices.Contains(cc.Encodings(), parquet.Encodings.DeltaBinaryPacked) {
			n++
		}
	})
	return n
}

// eachChunk calls fn with every column chunk's metadata of the file at
// path and its row group (nothing if there is no file).
func eachChunk(t *testing.T, path string, fn func(group int, cc *metadata.ColumnChunkMetaData)) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return
	}
	defer r.Close()
	for g := range r.NumRowGroups() {
		rg := r.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			fn(g, cc)
		}
	}
}

func releaseRecs(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		name      string
		rows      []int // rows of each written record
		batchRows int64
		cfg       WriteConfig
	}{
		{"no records", nil, 0, WriteConfig{}},
		{"one empty record", []int{0}, 0, WriteConfig{}},
		{"one record", []int{100}, 0, WriteConfig{}},
		{"many records small batches", []int{10, 0, 333, 1, 57}, 16, WriteConfig{}},
		{"zstd", []int{500, 500}, 0, WriteConfig{Compression: Zstd}},
		{"uncompressed", []int{200}, 7, WriteConfig{Compression: Uncompressed}},
		{"row groups of 64", []int{100, 100, 100}, 50, WriteConfig{RowGroupRows: 64}},
		{"no dictionary", []int{300}, 0, WriteConfig{NoDictionary: true}},
	}
	schema := allTypes()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			path := filepath.Join(t.TempDir(), "f.parquet")
			defer assertMem(t, mem, path)
			var in []arrow.Record
			for i, n := range tc.rows {
				in = append(in, genRecord(mem, schema, n, uint64(i)))
			}
			defer releaseRecs(in)
			writeWith(t, path, schema, in, tc.cfg)
			out, err := ReadFile(context.Background(), path, mem, tc.batchRows)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseRecs(out)
			checkBatches(t, out, tc.batchRows)
			want, got := concatAll(t, mem, schema, in), concatAll(t, mem, schema, out)
			defer want.Release()
			defer got.Release()
			if err := table.CheckSchema(schema, got.Schema()); err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(want, got) {
				t.Fatalf("records differ:\nwant %v\ngot  %v", want, got)
			}
		})
	}
}

// writeWith writes recs to path with cfg and returns the committed writer.
func writeWith(t *testing.T, path string, schema *arrow.Schema, recs []arrow.Record, cfg WriteConfig) *Writer {
	t.Helper()
	w, err := Create(path, schema, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return w
}

// writeArrow writes recs of schema to path with Arrow's writer alone (as
// another writer would), with props and the Arrow schema stored.
func writeArrow(t testing.TB, path string, schema *arrow.Schema, recs []arrow.Record, props *parquet.WriterProperties) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(schema, out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := fw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkBatches checks that no batch is empty or larger than batchRows.
func checkBatches(t *testing.T, recs []arrow.Record, batchRows int64) {
	t.Helper()
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	for i, r := range recs {
		if r.NumRows() > batchRows {
			t.Errorf("batch %d has %d rows, want <= %d", i, r.NumRows(), batchRows)
		}
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.parquet", "a.parquet", "c.txt", "10.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		pattern string
		want    []string
		err     error
	}{
		{"sorted, no directories", "*.parquet", []string{"10.parquet", "a.parquet", "b.parquet"}, nil},
		{"one file", "c.txt", []string{"c.txt"}, nil},
		{"no match", "*.csv", nil, ErrNoFiles},
		{"only a directory", "d.*", nil, ErrNoFiles},
		{"bad pattern", "[", nil, filepath.ErrBadPattern},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Glob(filepath.Join(dir, tc.pattern))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			for i := range got {
				got[i] = filepath.Base(got[i])
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckInputs(t *testing.T) {
	dir := t.TempDir()
	base := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	nullable := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	retyped := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int32}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	renamed := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "t", Type: arrow.BinaryTypes.String}}, nil)
	decimal := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "d", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}}}, nil)
	list := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	files := map[string]*arrow.Schema{"base": base, "base2": base, "nullable": nullable, "retyped": retyped,
		"renamed": renamed, "decimal": decimal, "list": list}
	for name, sc := range files {
		rec := genRecord(memory.DefaultAllocator, sc, 0, 1)
		if name == "base2" {
			rec.Release()
			rec = genRecord(memory.DefaultAllocator, sc, 10, 1)
		}
		if err := WriteFile(filepath.Join(dir, name), sc, []arrow.Record{rec}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := os.WriteFile(filepath.Join(dir, "garbage"), []byte("PAR1 this is not parquet PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		files    []string
		err      error
		mentions []string
		rows     int64
		nullable bool // k is nullable in the merged schema
	}{
		{"same schema", []string{"base", "base2"}, nil, nil, 10, false},
		{"nullability merged", []string{"base", "nullable", "base2"}, nil, nil, 10, true},
		{"type differs", []string{"base", "base2", "retyped"}, ErrSchemaMismatch, []string{"retyped", `"k"`}, 0, false},
		{"name differs", []string{"base", "renamed"}, ErrSchemaMismatch, []string{"renamed", "s"}, 0, false},
		{"decimal unsupported", []string{"decimal", "base"}, ErrUnsupportedType, []string{"decimal", "d"}, 0, false},
		{"list unsupported", []string{"list"}, ErrUnsupportedType, []string{"list", "l"}, 0, false},
		{"not parquet", []string{"base", "garbage"}, ErrRead, []string{"garbage"}, 0, false},
		{"missing file", []string{"nope"}, ErrRead, []string{"nope"}, 0, false},
		{"no files", nil, ErrNoFiles, nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			paths := make([]string, len(tc.files))
			for i, f := range tc.files {
				paths[i] = filepath.Join(dir, f)
			}
			in, err := CheckInputs(paths)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if err != nil {
				return
			}
			if in.Rows != tc.rows || in.Bytes <= 0 || len(in.Files) != len(paths) {
				t.Errorf("inputs = %+v, want %d rows", in, tc.rows)
			}
			if err := table.CheckSchema(base, in.Schema); err != nil {
				t.Error(err)
			}
			for _, f := range in.Schema.Fields() {
				if f.Nullable != (tc.nullable || f.Name == "s") || f.HasMetadata() {
					t.Errorf("field %v: want nullable=%v, no metadata", f, tc.nullable || f.Name == "s")
				}
			}
		})
	}
	if !errors.Is(mustErr(CheckInputs([]string{filepath.Join(dir, "decimal")})), table.ErrUnsupportedType) {
		t.Error("unsupported type does not wrap table.ErrUnsupportedType")
	}
}

func mustErr(_ Inputs, err error) error { return err }

func TestReadSchema(t *testing.T) {
	schema := allTypes()
	path := filepath.Join(t.TempDir(), "f.parquet")
	if err := WriteFile(path, schema, nil); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSchema(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := table.CheckSchema(schema, got); err != nil {
		t.Fatal(err)
	}
}

func TestWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.parquet")
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := genRecord(memory.DefaultAllocator, schema, 10, 1)
	defer rec.Release()
	w, err := Create(path, schema, WriteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file visible before Commit: %v", err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	if err := w.Write(rec); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Commit: %v, want ErrClosed", err)
	}
	if err := w.Commit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Commit: %v, want ErrClosed", err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("committed file: %v, mode %v", err, st.Mode())
	}
	assertOnlyFiles(t, dir, "out.parquet")
}

func TestWriterAbort(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	other := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int32}}, nil)
	rec := genRecord(memory.DefaultAllocator, other, 10, 1)
	defer rec.Release()
	w, err := Create(filepath.Join(dir, "out.parquet"), schema, WriteConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("Write of another schema: %v, want ErrSchemaMismatch", err)
	}
	for range 2 {
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	}
	assertOnlyFiles(t, dir)
}

func TestWriteConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  WriteConfig
		ok   bool
	}{
		{"zero", WriteConfig{}, true},
		{"default", DefaultWriteConfig(), true},
		{"zstd", WriteConfig{Compression: Zstd}, true},
		{"auto", WriteConfig{Compression: Auto}, true},
		{"unknown compression", WriteConfig{Compression: "lzo"}, false},
		{"negative row groups", WriteConfig{RowGroupRows: -1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	if _, err := Create(filepath.Join(t.TempDir(), "x"), allTypes(), WriteConfig{Compression: "lzo"}); err == nil {
		t.Fatal("Create accepted a bad config")
	}
}

func assertOnlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("directory holds %v, want %v", got, want)
	}
}

// TestReadMalformed cuts a valid file at many lengths and flips bytes: every
// read must fail with ErrRead or succeed, never panic or leak.
func TestReadMalformed(t *testing.T) {
	dir := t.TempDir()
	schema := allTypes()
	rec := genRecord(memory.DefaultAllocator, schema, 50, 1)
	defer rec.Release()
	good := filepath.Join(dir, "good.parquet")
	if err := WriteFile(good, schema, []arrow.Record{rec}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.parquet")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		b := slices.Clone(data)
		if i%2 == 0 {
			b = b[:rng.IntN(len(b))]
		} else {
			for range 4 {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		}
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		readBad(t, bad)
	}
}

func readBad(t *testing.T, path string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	recs, err := ReadFile(context.Background(), path, mem, 16)
	if err != nil && !errors.Is(err, ErrRead) {
		t.Fatalf("ReadFile error %v does not wrap ErrRead", err)
	}
	releaseRecs(recs)
	if _, err := ReadSchema(path); err != nil && !errors.Is(err, ErrRead) {
		t.Fatalf("ReadSchema error %v does not wrap ErrRead", err)
	}
}

func TestReadFileCancelled(t *testing.T) {
	schema := allTypes()
	rec := genRecord(memory.DefaultAllocator, schema, 100, 1)
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "f.parquet")
	if err := WriteFile(path, schema, []arrow.Record{rec}); err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	recs, err := ReadFile(ctx, path, mem, 10)
	if !errors.Is(err, context.Canceled) || recs != nil {
		t.Fatalf("ReadFile on a cancelled context: %d records, %v", len(recs), err)
	}
}

func BenchmarkWriteRead(b *testing.B) {
	schema := table.GenSchema()
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 100_000, Seed: 1, PayloadBytes: 100}, 0, 1)
	defer rec.Release()
	size := 100_000 * table.GenRowBytes(table.GenConfig{PayloadBytes: 100})
	path := filepath.Join(b.TempDir(), "f.parquet")
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteFile(path, schema, []arrow.Record{rec}); err != nil {
			b.Fatal(err)
		}
		recs, err := ReadFile(context.Background(), path, nil, 0)
		if err != nil {
			b.Fatal(err)
		}
		releaseRecs(recs)
	}
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size())/float64(size), "file/arrow")
	}
}

// BenchmarkWrite writes 1M rows of int64 key in [0, 4M), int64 id in
// [0, 16M) and float64 val, no dictionary, with each compression, and
// reports the file's size. In "job" val is id/3, as in the bench's merge
// and set-index inputs (every column then compresses to about 2/3); in
// "random" it has random bits, and id is a random int64 (incompressible).
func BenchmarkWrite(b *testing.B) {
	const rows = 1 << 20
	for _, random := range []bool{false, true} {
		rec := benchJobRecord(rows, random)
		defer rec.Release()
		for _, comp := range []Compression{Snappy, Auto, Uncompressed} {
			b.Run(fmt.Sprintf("%s/%s", map[bool]string{false: "job", true: "random"}[random], comp), func(b *testing.B) {
				benchWrite(b, rec, WriteConfig{Compression: comp, NoDictionary: true})
			})
		}
	}
}

// benchWrite writes rec with cfg in a loop and reports the file's size.
func benchWrite(b *testing.B, rec arrow.Record, cfg WriteConfig) {
	path := filepath.Join(b.TempDir(), "f.parquet")
	var w *Writer
	b.SetBytes(rec.NumRows() * 24)
	b.ReportAllocs()
	for b.Loop() {
		w = writeBench(b, path, rec, cfg)
	}
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size()), "file-B")
	}
	b.Logf("codecs %v", w.Codecs())
}

// benchJobRecord makes the rows of BenchmarkWrite.
func benchJobRecord(rows int, random bool) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "val", Type: arrow.PrimitiveTypes.Float64}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(1, 2))
	for range rows {
		id, val := rng.Int64N(16<<20), 0.0
		val = float64(id) / 3
		if random {
			id, val = int64(rng.Uint64()), math.Float64frombits(rng.Uint64()&^(1<<62))
		}
		bld.Field(0).(*array.Int64Builder).Append(rng.Int64N(4 << 20))
		bld.Field(1).(*array.Int64Builder).Append(id)
		bld.Field(2).(*array.Float64Builder).Append(val)
	}
	return bld.NewRecord()
}

// writeBench writes rec to path with cfg and returns the committed writer.
func writeBench(b *testing.B, path string, rec arrow.Record, cfg WriteConfig) *Writer {
	w, err := Create(path, rec.Schema(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
	return w
}

func BenchmarkRead(b *testing.B) {
	schema := table.GenSchema()
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 100_000, Seed: 1, PayloadBytes: 100}, 0, 1)
	defer rec.Release()
	path := filepath.Join(b.TempDir(), "f.parquet")
	if err := WriteFile(path, schema, []arrow.Record{rec}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(100_000 * table.GenRowBytes(table.GenConfig{PayloadBytes: 100}))
	b.ReportAllocs()
	for b.Loop() {
		recs, err := ReadFile(context.Background(), path, nil, 0)
		if err != nil {
			b.Fatal(err)
		}
		releaseRecs(recs)
	}
}
