package parquetio

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// poisonAlloc overwrites memory as it is freed, as a pool that reuses it
// would: a reader of freed memory reads 0xA5s.
type poisonAlloc struct{ memory.Allocator }

func (p poisonAlloc) Free(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = 0xA5
	}
	p.Allocator.Free(b)
}

// Reallocate frees (poisons) what it moves from.
func (p poisonAlloc) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		return p.Allocator.Reallocate(size, b)
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

// TestWriteHoldsRecordsUntilRowGroup writes records that the caller
// releases (and whose memory is overwritten) as soon as Write returns, in
// row groups of 64 rows that records cross: the string column's statistics,
// which the Parquet writer keeps as slices of the records until a row group
// is closed, and the rows read back are those written, and every record is
// released by Commit.
func TestWriteHoldsRecordsUntilRowGroup(t *testing.T) {
	mem := memory.NewCheckedAllocator(poisonAlloc{memory.NewGoAllocator()})
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil)
	path := filepath.Join(t.TempDir(), "held.parquet")
	w, err := Create(path, schema, WriteConfig{Compression: Uncompressed, RowGroupRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, n := range []int{30, 34, 100, 20, 200, 0, 16} {
		rec := stringRows(mem, schema, at, n)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		at += n
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	checkStringStats(t, path, 64, at)
	recs, err := ReadFile(context.Background(), path, memory.NewGoAllocator(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecs(recs)
	row := 0
	for _, r := range recs {
		s := r.Column(0).(*array.String)
		for j := range s.Len() {
			if want := rowString(row); s.Value(j) != want {
				t.Fatalf("row %d read back as %q, want %q", row, s.Value(j), want)
			}
			row++
		}
	}
	if row != at {
		t.Fatalf("%d rows read back, want %d", row, at)
	}
}

func rowString(i int) string { return fmt.Sprintf("v%06d", i) }

// stringRows is rows [from, from+n) of schema: rowString(i) and i.
func stringRows(mem memory.Allocator, schema *arrow.Schema, from, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.StringBuilder).Append(rowString(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecord()
}

// checkStringStats checks that each row group of groupRows rows has the
// least and greatest strings of its rows in its statistics.
func checkStringStats(t *testing.T, path string, groupRows, rows int) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if want := (rows + groupRows - 1) / groupRows; r.NumRowGroups() != want {
		t.Fatalf("%d row groups, want %d", r.NumRowGroups(), want)
	}
	for g := range r.NumRowGroups() {
		cc, err := r.MetaData().RowGroup(g).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := cc.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		bs, ok := st.(*metadata.ByteArrayStatistics)
		if !ok || !bs.HasMinMax() {
			t.Fatalf("row group %d: statistics %v, want string min and max", g, st)
		}
		lo, hi := rowString(g*groupRows), rowString(min(rows, (g+1)*groupRows)-1)
		if string(bs.Min()) != lo || string(bs.Max()) != hi {
			t.Errorf("row group %d: min %q max %q, want %q %q", g, bs.Min(), bs.Max(), lo, hi)
		}
	}
}
