package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeArrowDict writes recs of schema with Arrow's writer, dictionary on,
// with the given dictionary page limit, data page size and version, in
// row groups of groupRows, and any further properties.
func writeArrowDict(t testing.TB, path string, schema *arrow.Schema, recs []arrow.Record, dictLimit, pageSize, groupRows int64, v2 bool, more ...parquet.WriterProperty) {
	t.Helper()
	version := parquet.DataPageV1
	if v2 {
		version = parquet.DataPageV2
	}
	props := append([]parquet.WriterProperty{parquet.WithDictionaryDefault(true),
		parquet.WithDictionaryPageSizeLimit(dictLimit), parquet.WithDataPageSize(pageSize), parquet.WithMaxRowGroupLength(groupRows),
		parquet.WithDataPageVersion(version), parquet.WithCompression(compress.Codecs.Snappy)}, more...)
	writeArrow(t, path, schema, recs, parquet.NewWriterProperties(props...))
}

// TestDictPagesMatchArrow: dictionary-encoded files (Arrow's writer: small
// and fallen-back dictionaries, pages of both versions, many small pages,
// several row groups; the flat writer: runs of equal indices, beside
// nullable ones, with and without nulls) read here in batches of 1 to 1M
// rows give the records Arrow's reader gives, every string and binary
// column decoded here.
func TestDictPagesMatchArrow(t *testing.T) {
	type dictCase struct {
		name                           string
		c                              flatCase
		dictLimit, pageSize, groupRows int64
		batch                          int64 // values Arrow's writer takes at a time, 0: its default
		v2, flat                       bool
	}
	cases := []dictCase{
		{name: "small", c: flatCase{ints: "small", nulls: 5, recRows: []int{5000}}, dictLimit: 1 << 20, pageSize: 1 << 20, groupRows: 1 << 20},
		// Arrow's writer keeps a dictionary it outgrows only if a page of
		// indices was cut before: small pages and batches make one
		{name: "fallback", c: flatCase{ints: "random", nulls: 4, recRows: []int{5000}}, dictLimit: 2000, pageSize: 100, groupRows: 1 << 20, batch: 64},
		{name: "v2-small-pages", c: flatCase{ints: "runs", nulls: 3, recRows: []int{3000, 4000}}, dictLimit: 1 << 20, pageSize: 700, groupRows: 1 << 20, v2: true},
		{name: "groups", c: flatCase{ints: "small", recRows: []int{2500, 2500}}, dictLimit: 3000, pageSize: 2000, groupRows: 1100},
		{name: "one-value", c: flatCase{ints: "one", recRows: []int{900}}, dictLimit: 1 << 20, pageSize: 1 << 20, groupRows: 1 << 20},
		{name: "flat-runs", c: flatCase{ints: "runs", nulls: 3, recRows: []int{6000}, dict: true, codec: Snappy}, flat: true},
		{name: "flat-groups", c: flatCase{ints: "small", nulls: 2, recRows: []int{700, 900}, groupRows: 500, dict: true, codec: Uncompressed}, flat: true},
	}
	for _, dc := range cases {
		t.Run(dc.name, func(t *testing.T) {
			recs := flatRecords(dc.c)
			defer releaseRecs(recs)
			path := filepath.Join(t.TempDir(), "f.parquet")
			if dc.flat {
				writeFlatCase(t, path, dc.c, recs, true)
			} else {
				var more []parquet.WriterProperty
				if dc.batch > 0 {
					more = append(more, parquet.WithBatchSize(dc.batch))
				}
				writeArrowDict(t, path, flatSchema(), recs, dc.dictLimit, dc.pageSize, dc.groupRows, dc.v2, more...)
			}
			rdr, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			schema, _ := pqarrow.FromParquet(rdr.MetaData().Schema, nil, rdr.MetaData().KeyValueMetadata())
			if got := countFast(fastColumns(rdr, schema)); got != 4 {
				t.Errorf("%d columns decoded here, want the 4 string and binary ones", got)
			}
			dicts := 0
			for g := range rdr.NumRowGroups() {
				for c := range rdr.MetaData().Schema.NumColumns() {
					if cc, _ := rdr.MetaData().RowGroup(g).ColumnChunk(c); cc.HasDictionaryPage() {
						dicts++
					}
				}
			}
			rdr.Close()
			if dicts == 0 {
				t.Fatal("no dictionary in the file")
			}
			for _, batch := range []int64{1, 7, 1000, 1 << 20} {
				got, err := ReadFile(context.Background(), path, memory.DefaultAllocator, batch)
				if err != nil {
					t.Fatal(err)
				}
				want := arrowOnly(t, path, batch)
				if len(got) != len(want) {
					t.Fatalf("batch %d: %d records, Arrow reads %d", batch, len(got), len(want))
				}
				for i := range got {
					if !sameRows(got[i], want[i]) {
						t.Fatalf("batch %d: record %d differs from Arrow's", batch, i)
					}
				}
				releaseRecs(got)
				releaseRecs(want)
			}
		})
	}
}

// TestIndicesRoundTrip: appendIndices' runs decode to the indices encoded,
// for every width, runs long and short, and lengths around group edges.
func TestIndicesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for w := range 33 {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 100, 1000} {
			idx := make([]uint32, n)
			size := min(int64(1)<<w, 1<<31-1)
			for i := range idx {
				switch {
				case i > 0 && rng.IntN(3) == 0:
					idx[i] = idx[i-1] // runs
				default:
					idx[i] = uint32(rng.Int64N(size))
				}
			}
			enc := appendIndices(nil, idx, w)
			got, err := decodeIndices(nil, enc, n, int(size))
			same := slices.EqualFunc(got, idx, func(g int32, i uint32) bool { return uint32(g) == i })
			if err != nil || !same {
				t.Fatalf("width %d, %d indices: %v, %v", w, n, err, err == nil && !same)
			}
		}
	}
}

// TestDecodeIndicesRefuses: indices past the dictionary, widths past 32,
// runs without values and data that ends early are errors.
func TestDecodeIndicesRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		n    int
		size int
	}{
		{"empty", nil, 1, 4},
		{"width 33", []byte{33, 2, 0, 0, 0, 0, 0}, 1, 4},
		{"index past the dictionary", []byte{3, 2, 5}, 1, 4},
		{"no runs left", []byte{3, 2, 1}, 2, 4},
		{"empty RLE run", []byte{3, 0, 1}, 1, 4},
		{"empty bit-packed run", []byte{3, 1}, 1, 4},
		{"bit-packed run short", []byte{8, 3, 1, 2}, 8, 4},
		{"RLE value missing", []byte{9, 4, 1}, 2, 300},
	} {
		if _, err := decodeIndices(nil, tc.data, tc.n, tc.size); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if got, err := decodeIndices(nil, nil, 0, 4); err != nil || len(got) != 0 {
		t.Errorf("no indices, no data (a page of nulls as other writers may leave it): %v, %v", got, err)
	}
}

// TestNullPageGivesWidth: a dictionary column's page of nulls alone (its
// chunk all null: an empty dictionary) still holds the indices' bit width
// after its levels, as Arrow's writer writes it.
func TestNullPageGivesWidth(t *testing.T) {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendNulls(5)
	a := b.NewArray()
	b.Release()
	defer a.Release()
	f := &flatWriter{pageBufs: new(pageBufs)}
	c := flatCol{id: arrow.INT64, width: 8, optional: true}
	vals, nulls := f.encodePage(c, []segment{{a: a, hi: 5}}, true, nil, 0)
	levels := appendDefLevels(nil, []segment{{a: a, hi: 5}}, 5, 5)
	if vals != 5 || nulls != 5 || !bytes.Equal(f.page, append(levels, 0)) {
		t.Errorf("page of 5 nulls: %d values, %d nulls, %x, want 5, 5, the levels %x then width 0", vals, nulls, f.page, levels)
	}
}

// FuzzDecodeIndices: any data decodes to n valid indices or an error,
// never a panic.
func FuzzDecodeIndices(f *testing.F) {
	f.Add(appendIndices(nil, []uint32{1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3}, 2), 11, 4)
	f.Add([]byte{5, 3, 0xff, 0xff, 0xff, 0xff, 0xff}, 8, 32)
	f.Fuzz(func(t *testing.T, data []byte, n, size int) {
		n, size = n%5000, size%100000
		if n < 0 || size < 0 {
			return
		}
		got, err := decodeIndices(nil, data, n, size)
		if err != nil {
			return
		}
		if len(got) != n {
			t.Fatalf("%d indices, want %d", len(got), n)
		}
		for _, k := range got {
			if k < 0 || int(k) >= size {
				t.Fatal(fmt.Sprintf("index %d of a dictionary of %d", k, size))
			}
		}
	})
}

// BenchmarkReadDict reads 1M rows of an int64, a float64 and a string
// column of 1000 distinct values each, dictionary-encoded by Arrow's
// writer (required, or nullable with every 10th row null), here ("mixed")
// and by Arrow's reader alone.
func BenchmarkReadDict(b *testing.B) {
	const rows = 1 << 20
	for _, nullable := range []bool{false, true} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: nullable},
			{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: nullable}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: nullable}}, nil)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range rows {
			if nullable && i%10 == 3 {
				for _, fb := range bld.Fields() {
					fb.AppendNull()
				}
				continue
			}
			k := rng.IntN(1000)
			bld.Field(0).(*array.Int64Builder).Append(int64(k) << 20)
			bld.Field(1).(*array.Float64Builder).Append(float64(k) / 7)
			bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("tag-%06d", k))
		}
		rec := bld.NewRecord()
		bld.Release()
		path := filepath.Join(b.TempDir(), "f.parquet")
		writeArrowDict(b, path, schema, []arrow.Record{rec}, 1<<20, 1<<20, rows, false)
		rec.Release()
		suffix := map[bool]string{false: "", true: "-nullable"}[nullable]
		b.Run("mixed"+suffix, func(b *testing.B) {
			b.SetBytes(rows * 28)
			for b.Loop() {
				recs, err := ReadFile(context.Background(), path, nil, DefaultBatchRows)
				if err != nil {
					b.Fatal(err)
				}
				releaseRecs(recs)
			}
		})
		b.Run("arrow"+suffix, func(b *testing.B) {
			b.SetBytes(rows * 28)
			for b.Loop() {
				releaseRecs(arrowOnly(b, path, DefaultBatchRows))
			}
		})
	}
}
