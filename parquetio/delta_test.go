package parquetio

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// decodeDelta is decodeDeltaEnd without the stream's end.
func decodeDelta(dst []uint64, src []byte, want int, scratch *[]byte) ([]uint64, error) {
	dst, _, err := decodeDeltaEnd(dst, src, want, scratch)
	return dst, err
}

// TestReadNullableDelta reads files another writer made with a nullable
// int64 column in DELTA_BINARY_PACKED (which Arrow v15's decoder fails to
// read when a batch ends inside a page) back in batches of 50 rows: every
// row comes back, whether the row groups are equal (read a row group at a
// time) or not (read whole).
func TestReadNullableDelta(t *testing.T) {
	for _, groups := range [][]int{{1000, 1000, 1000}, {1000, 1000, 400}, {700, 1000, 300}, {3000}} {
		t.Run(fmt.Sprint(groups), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			var want []arrow.Record
			for i, rows := range groups {
				want = append(want, nullableKeys(rows, i))
			}
			defer releaseRecs(want)
			writeDeltaGroups(t, path, want)
			got, err := ReadFile(context.Background(), path, memory.DefaultAllocator, 50)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseRecs(got)
			w, g := concatAll(t, memory.DefaultAllocator, want[0].Schema(), want), concatAll(t, memory.DefaultAllocator, want[0].Schema(), got)
			defer w.Release()
			defer g.Release()
			if !array.RecordEqual(w, g) {
				t.Fatalf("read back %d rows that differ from the %d written", g.NumRows(), w.NumRows())
			}
		})
	}
}

// nullableKeys is rows of a nullable int64 column of sorted keys, every
// 7th null, starting at 1000*seed.
func nullableKeys(rows, seed int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := range rows {
		if i%7 == 3 {
			b.AppendNull()
			continue
		}
		b.Append(int64(1000*seed + i))
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecord(schema, []arrow.Array{a}, int64(rows))
}

// writeDeltaGroups writes each record as a row group (pqarrow's Write), its
// column DELTA_BINARY_PACKED, with pqarrow directly, as another writer
// would.
func writeDeltaGroups(t *testing.T, path string, recs []arrow.Record) {
	t.Helper()
	writeArrow(t, path, recs[0].Schema(), recs, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false),
		parquet.WithEncoding(parquet.Encodings.DeltaBinaryPacked), parquet.WithDataPageSize(1<<20)))
	n := 0
	eachChunk(t, path, func(g int, _ *metadata.ColumnChunkMetaData) { n++ })
	if n != len(recs) {
		t.Fatalf("%d row groups written, want %d", n, len(recs))
	}
}
