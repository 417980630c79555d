package parquetio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// deltaFileCase is a file of delta-encoded integer columns (and others)
// written straight with Arrow's writer, to be read back both ways.
type deltaFileCase struct {
	name       string
	schema     *arrow.Schema
	rows       int
	groupRows  int64
	pageBytes  int64
	pageV2     bool
	values     string // "sorted", "random" (full range: 64-bit deltas) or "extremes"
	wantFast   int    // columns decoded here
	batchSizes []int64
}

func deltaFileCases() []deltaFileCase {
	i64 := arrow.PrimitiveTypes.Int64
	i32 := arrow.PrimitiveTypes.Int32
	onlyInts := arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}, {Name: "b", Type: i32}}, nil)
	// mixed: the strings, binaries and delta integers are decoded here,
	// plain numbers and d (a date) are Arrow's; s, n, m and ls nullable
	// (with nulls), p-named integers and n plain, the other integers delta,
	// l-named strings and binaries DELTA_LENGTH_BYTE_ARRAY.
	mixed := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "a", Type: i64}, {Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "n", Type: i64, Nullable: true}, {Name: "b", Type: i32},
		{Name: "m", Type: i32, Nullable: true}, {Name: "d", Type: arrow.FixedWidthTypes.Date32},
		{Name: "rs", Type: arrow.BinaryTypes.String}, {Name: "rb", Type: arrow.BinaryTypes.Binary},
		{Name: "f4", Type: arrow.PrimitiveTypes.Float32}, {Name: "pi", Type: i64}, {Name: "pj", Type: i32},
		{Name: "ls", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "lb", Type: arrow.BinaryTypes.Binary}}, nil)
	// ours: every column decoded here (no Arrow reader behind the records).
	ours := arrow.NewSchema([]arrow.Field{{Name: "a", Type: i64}, {Name: "rs", Type: arrow.BinaryTypes.String},
		{Name: "lb", Type: arrow.BinaryTypes.Binary}, {Name: "ls", Type: arrow.BinaryTypes.String}}, nil)
	batches := []int64{1, 7, 128, 1000, 5000}
	var cases []deltaFileCase
	for _, v := range []string{"sorted", "random", "extremes"} {
		for _, v2 := range []bool{false, true} {
			cases = append(cases,
				deltaFileCase{"ints/" + v, onlyInts, 3001, 1 << 20, 1 << 20, v2, v, 2, batches},
				deltaFileCase{"ints/small-pages/" + v, onlyInts, 3001, 1 << 20, 512, v2, v, 2, batches},
				deltaFileCase{"ints/row-groups/" + v, onlyInts, 3001, 700, 1024, v2, v, 2, batches},
				deltaFileCase{"mixed/" + v, mixed, 2500, 900, 700, v2, v, 8, batches},
				deltaFileCase{"ours/" + v, ours, 2500, 900, 700, v2, v, 4, batches},
			)
		}
	}
	for i := range cases {
		if cases[i].pageV2 {
			cases[i].name += "/v2"
		}
	}
	return append(cases, deltaFileCase{"empty", onlyInts, 0, 1 << 20, 1 << 20, false, "sorted", 2, []int64{1}})
}

// deltaValue is row i's value of an integer column as c says.
func deltaValue(c deltaFileCase, rng *rand.Rand, i int) int64 {
	switch c.values {
	case "random":
		return int64(rng.Uint64())
	case "extremes":
		return []int64{math.MinInt64, math.MaxInt64, 0, -1, math.MinInt32, math.MaxInt32}[rng.IntN(6)]
	}
	return int64(i/3) * 1000
}

// writeDeltaFile writes c's rows with every integer column that can be
// DELTA_BINARY_PACKED so, and every l-named string or binary column
// DELTA_LENGTH_BYTE_ARRAY, without dictionaries.
func writeDeltaFile(t *testing.T, c deltaFileCase, path string) arrow.Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(len(c.name)), 3))
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer b.Release()
	for i := range c.rows {
		for j, f := range c.schema.Fields() {
			switch fb := b.Field(j).(type) {
			case *array.Int64Builder:
				if f.Nullable && i%5 == 0 {
					fb.AppendNull()
				} else {
					fb.Append(deltaValue(c, rng, i))
				}
			case *array.Int32Builder:
				if f.Nullable && i%5 == 0 {
					fb.AppendNull()
				} else {
					fb.Append(int32(deltaValue(c, rng, i)))
				}
			case *array.Date32Builder:
				fb.Append(arrow.Date32(i))
			case *array.Float64Builder:
				fb.Append(rng.Float64())
			case *array.Float32Builder:
				fb.Append(rng.Float32())
			case *array.StringBuilder:
				if f.Nullable && i%7 == 0 {
					fb.AppendNull()
				} else {
					fb.Append(strings.Repeat("v", rng.IntN(3)) + fmt.Sprint(rng.IntN(50)))
				}
			case *array.BinaryBuilder:
				fb.Append([]byte(strings.Repeat("\x00b", rng.IntN(4))))
			}
		}
	}
	rec := b.NewRecord()
	opts := []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(c.groupRows),
		parquet.WithDataPageSize(c.pageBytes), parquet.WithBatchSize(64)}
	if c.pageV2 {
		opts = append(opts, parquet.WithDataPageVersion(parquet.DataPageV2))
	}
	for _, f := range c.schema.Fields() {
		if t := f.Type.ID(); ((t == arrow.INT64 && !f.Nullable) || t == arrow.INT32) && !strings.HasPrefix(f.Name, "p") {
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		}
		if strings.HasPrefix(f.Name, "l") {
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaLengthByteArray))
		}
	}
	writeArrow(t, path, c.schema, []arrow.Record{rec}, parquet.NewWriterProperties(opts...))
	return rec
}

// arrowOnly reads path with Arrow's reader alone, in batches of batchRows.
func arrowOnly(t testing.TB, path string, batchRows int64) []arrow.Record {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var recs []arrow.Record
	for rr.Next() {
		rr.Record().Retain()
		recs = append(recs, rr.Record())
	}
	return recs
}

// TestMixedReaderMatchesArrow: files of delta-encoded integer columns
// (alone; beside strings and binaries, plain and DELTA_LENGTH_BYTE_ARRAY,
// required and nullable, also decoded here, and plain numbers and a date
// that Arrow reads; with strings and binaries, every column decoded here),
// sorted, random over the whole range (64-bit deltas) and
// alternating extremes (deltas that wrap), in pages of both versions, small
// and large, and several row groups, read here in batches of 1 to 5000
// rows, give the records Arrow's reader gives, batch for batch, from
// memory that is all given back.
func TestMixedReaderMatchesArrow(t *testing.T) {
	for _, c := range deltaFileCases() {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			rec := writeDeltaFile(t, c, path)
			defer rec.Release()
			rdr, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			schema, _ := pqarrow.FromParquet(rdr.MetaData().Schema, nil, rdr.MetaData().KeyValueMetadata())
			if got := countFast(fastColumns(rdr, schema)); got != c.wantFast {
				t.Errorf("%d columns decoded here, want %d", got, c.wantFast)
			}
			rdr.Close()
			for _, batch := range c.batchSizes {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				got, err := ReadFile(context.Background(), path, mem, batch)
				if err != nil {
					t.Fatal(err)
				}
				want := arrowOnly(t, path, max(1, min(batch, int64(c.rows))))
				if len(got) != len(want) {
					t.Fatalf("batch %d: %d records, Arrow reads %d", batch, len(got), len(want))
				}
				for i := range got {
					if !array.RecordEqual(got[i], want[i]) || !got[i].Schema().Equal(want[i].Schema()) {
						t.Fatalf("batch %d: record %d differs from Arrow's", batch, i)
					}
				}
				releaseRecs(got)
				releaseRecs(want)
				mem.AssertSize(t, 0)
			}
		})
	}
}

// countFast counts the columns decoded here.
func countFast(kinds []colKind) int {
	n := 0
	for _, k := range kinds {
		if k != kindArrow {
			n++
		}
	}
	return n
}

// TestFastColumnsChoice: a column is decoded here only when it is flat and
// every chunk of it has one encoding of its type's that this package
// decodes (a dictionary counts as PLAIN).
func TestFastColumnsChoice(t *testing.T) {
	dir := t.TempDir()
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	for _, tc := range []struct {
		name string
		cfg  WriteConfig
		want []colKind
	}{
		{"auto, sorted keys", WriteConfig{NoDictionary: true}, []colKind{kindDelta, kindDelta, kindDeltaBytes}},
		{"snappy", WriteConfig{Compression: Snappy, NoDictionary: true}, []colKind{kindArrow, kindArrow, kindPlainBytes}},
		{"dictionary", WriteConfig{Compression: Snappy}, []colKind{kindArrow, kindArrow, kindPlainBytes}},
	} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := range 5000 {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Int32Builder).Append(int32(i))
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprint(i % 7))
		}
		rec := b.NewRecord()
		b.Release()
		path := filepath.Join(dir, tc.name+".parquet")
		writeWith(t, path, schema, []arrow.Record{rec}, tc.cfg)
		rec.Release()
		rdr, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		got := fastColumns(rdr, schema)
		rdr.Close()
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: columns %v decoded here, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDecodeDeltaRefuses: truncated or inconsistent streams are errors
// naming what is wrong, never a panic or a short result.
func TestDecodeDeltaRefuses(t *testing.T) {
	header := func(block, minis, total uint64, first int64) []byte {
		b := binary.AppendUvarint(nil, block)
		b = binary.AppendUvarint(b, minis)
		b = binary.AppendUvarint(b, total)
		return binary.AppendVarint(b, first)
	}
	good := append(header(128, 4, 3, 5), binary.AppendVarint(nil, 1)...)
	good = append(good, 1, 0, 0, 0) // bit width 1 for the first miniblock
	good = append(good, make([]byte, 4)...)
	var scratch []byte
	if vals, err := decodeDelta(nil, good, 3, &scratch); err != nil || fmt.Sprint(vals) != "[5 6 7]" {
		t.Fatalf("a good stream: %v, %v", vals, err)
	}
	for name, tc := range map[string]struct {
		src  []byte
		want int
	}{
		"empty":             {nil, 1},
		"count differs":     {good, 4},
		"block size 100":    {header(100, 4, 3, 5), 3},
		"32 miniblocks":     {header(128, 32, 3, 5), 3},
		"no block header":   {header(128, 4, 3, 5), 3},
		"no bit widths":     {append(header(128, 4, 3, 5), 2), 3},
		"bit width 65":      {append(append(header(128, 4, 3, 5), 2), 65, 0, 0, 0), 3},
		"truncated values":  {good[:len(good)-1], 3},
		"huge block":        {header(1<<40, 4, 3, 5), 3},
		"truncated varints": {[]byte{0x80, 0x80}, 3},
	} {
		if _, err := decodeDelta(nil, tc.src, tc.want, &scratch); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzDecodeDelta: any bytes decode to exactly the values asked for, or
// give an error; never a panic.
func FuzzDecodeDelta(f *testing.F) {
	f.Add([]byte{0x80, 0x01, 0x04, 0x03, 0x0a, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0}, 3)
	f.Add([]byte{0x80, 0x01, 0x01, 0x40, 0x00, 0x00, 64}, 64)
	f.Fuzz(func(t *testing.T, src []byte, want int) {
		if want < 0 || want > 1<<16 {
			return
		}
		var scratch []byte
		vals, err := decodeDelta(nil, src, want, &scratch)
		if err == nil && len(vals) != want {
			t.Fatalf("%d values, want %d", len(vals), want)
		}
	})
}

// BenchmarkReadSimple reads 1M rows of two delta-encoded int64 columns
// (sorted keys, as a set-index writes them, and row ids), a float64 and a
// string column (as gen-parquet's tag), in 64K-row batches: here
// ("mixed") and by Arrow's reader alone.
func BenchmarkReadSimple(b *testing.B) {
	const rows = 1 << 20
	rec := benchSimpleRecord(rows)
	defer rec.Release()
	path := filepath.Join(b.TempDir(), "f.parquet")
	w := writeBench(b, path, rec, WriteConfig{NoDictionary: true})
	b.Logf("codecs %v", w.Codecs())
	b.Run("mixed", func(b *testing.B) {
		b.SetBytes(rows * 36)
		for b.Loop() {
			recs, err := ReadFile(context.Background(), path, nil, DefaultBatchRows)
			if err != nil {
				b.Fatal(err)
			}
			releaseRecs(recs)
		}
	})
	b.Run("arrow", func(b *testing.B) {
		b.SetBytes(rows * 36)
		for b.Loop() {
			releaseRecs(arrowOnly(b, path, DefaultBatchRows))
		}
	})
}

// benchSimpleRecord makes rows rows of two int64 columns (sorted keys, as a
// set-index writes them, and row ids), a float64 and a string column (as
// gen-parquet's tag): 36 bytes a row.
func benchSimpleRecord(rows int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "val", Type: arrow.PrimitiveTypes.Float64},
		{Name: "tag", Type: arrow.BinaryTypes.String}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range rows {
		bld.Field(0).(*array.Int64Builder).Append(int64(i) * 1000)
		bld.Field(1).(*array.Int64Builder).Append(rng.Int64N(int64(rows)))
		bld.Field(2).(*array.Float64Builder).Append(float64(i) / 3)
		bld.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("t%07d", rng.IntN(rows)))
	}
	return bld.NewRecord()
}

// TestPlainPagesRefused: a plain page too short for its values, or whose
// lengths run past it, is an error, not a short or garbled column.
func TestPlainPagesRefused(t *testing.T) {
	le := func(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }
	good := append(append(le(2), "ab"...), append(le(0), nil...)...)
	starts, ends, err := plainBytes(nil, nil, good, 2)
	if err != nil || fmt.Sprint(starts, ends) != "[4 10] [6 10]" {
		t.Fatalf("two values: %v %v, %v", starts, ends, err)
	}
	for name, tc := range map[string]struct {
		data []byte
		n    int
	}{
		"one value short":     {good, 3},
		"length past the end": {append(le(9), "ab"...), 1},
		"half a length":       {[]byte{1, 0}, 1},
		"huge length":         {le(math.MaxUint32), 1},
	} {
		if _, _, err := plainBytes(nil, nil, tc.data, tc.n); !errors.Is(err, errPage) {
			t.Errorf("%s: %v, want errPage", name, err)
		}
	}
	f := &fastColumn{kind: kindPlainBytes, field: arrow.Field{Name: "x", Type: arrow.BinaryTypes.String}}
	if err := f.decode(parquet.Encodings.Plain, le(9), 1); !errors.Is(err, errPage) {
		t.Errorf("a length past the page: %v, want errPage", err)
	}
	if err := f.decode(parquet.Encodings.DeltaLengthByteArray, good, 2); !errors.Is(err, errPage) {
		t.Errorf("a delta-length page in a plain column: %v, want errPage", err)
	}
}

// FuzzPlainBytes: any page bytes give n values inside the page, or an
// error; never a panic.
func FuzzPlainBytes(f *testing.F) {
	f.Add([]byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0}, 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		starts, ends, err := plainBytes(nil, nil, data, n)
		if err != nil {
			return
		}
		if len(starts) != n || len(ends) != n {
			t.Fatalf("%d values, want %d", len(starts), n)
		}
		for i := range starts {
			if starts[i] > ends[i] || int(ends[i]) > len(data) {
				t.Fatalf("value %d at [%d, %d) of %d bytes", i, starts[i], ends[i], len(data))
			}
		}
	})
}

// FuzzDeltaLengthBytes: any page data gives n values lying inside the
// page's value bytes, one after another, or an error; never a panic.
func FuzzDeltaLengthBytes(f *testing.F) {
	f.Add(appendValueBytes(appendDelta(nil, arrow.INT32, []int64{2, 0, 3}), nil, 0), 3)
	f.Add(append(appendDelta(nil, arrow.INT32, []int64{2, 0, 3}), "abxyz"...), 3)
	f.Add(append(appendDelta(nil, arrow.INT32, []int64{-1}), "ab"...), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		c := &fastColumn{kind: kindDeltaBytes}
		if err := c.deltaLengthBytes(data, n); err != nil {
			return
		}
		if len(c.starts) != n || len(c.ends) != n {
			t.Fatalf("%d values, want %d", len(c.starts), n)
		}
		at := int32(0)
		for i := range c.starts {
			if c.starts[i] != at || c.ends[i] < at || int(c.ends[i]) > len(c.raw) {
				t.Fatalf("value %d at [%d, %d) of %d bytes, want it to start at %d", i, c.starts[i], c.ends[i], len(c.raw), at)
			}
			at = c.ends[i]
		}
	})
}

// TestReadColumn: each column of files of every case read alone (decoded
// here or by Arrow, beside columns of both) equals that column of the
// whole file; a missing column fails naming it.
func TestReadColumn(t *testing.T) {
	for _, c := range deltaFileCases() {
		if c.pageV2 || c.values != "random" && c.rows > 0 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			rec := writeDeltaFile(t, c, path)
			defer rec.Release()
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			for i, f := range c.schema.Fields() {
				got, err := ReadColumn(context.Background(), path, f.Name, mem)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got, rec.Column(i)) {
					t.Errorf("column %s read alone differs from the file's", f.Name)
				}
				got.Release()
			}
			if _, err := ReadColumn(context.Background(), path, "nope", mem); !errors.Is(err, ErrSchemaMismatch) || !strings.Contains(err.Error(), "nope") {
				t.Errorf("a missing column: %v", err)
			}
		})
	}
}
