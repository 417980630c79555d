package bench

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/shufflenode/shufflenode/table"
)

// TestCeilingRows: keys sorted and below 2^40, val = id/3, every tag "t"
// and 7 digits of its id.
func TestCeilingRows(t *testing.T) {
	rec := ceilingRows(5000, 1)
	defer rec.Release()
	keys := rec.Column(0).(*array.Int64).Int64Values()
	if !slices.IsSorted(keys) || keys[len(keys)-1] >= 1<<40 || keys[0] == keys[len(keys)-1] {
		t.Fatalf("keys not sorted, or out of [0, 2^40), or all equal: %d .. %d", keys[0], keys[len(keys)-1])
	}
	ids, vals, tags := rec.Column(1).(*array.Int64), rec.Column(2).(*array.Float64), rec.Column(3).(*array.String)
	for i := range int(rec.NumRows()) {
		id := ids.Value(i)
		want := []byte("t0000000")
		for j, d := 7, id%10_000_000; j > 0; j, d = j-1, d/10 {
			want[j] = byte('0' + d%10)
		}
		if vals.Value(i) != float64(id)/3 || tags.Value(i) != string(want) {
			t.Fatalf("row %d: id %d, val %g, tag %q; want val %g, tag %q", i, id, vals.Value(i), tags.Value(i), float64(id)/3, want)
		}
	}
}

// TestParquetCeilings writes and reads back whole files, counts their
// bytes, and leaves nothing in the directory.
func TestParquetCeilings(t *testing.T) {
	dir := t.TempDir()
	w, r, err := ParquetCeilings(context.Background(), dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	rec := ceilingRows(pqCeilingFileRows, 5)
	defer rec.Release()
	if size := table.RecordBytes(rec); w.Bytes != r.Bytes || w.Bytes < 1<<20 || w.Bytes%size != 0 {
		t.Errorf("written %d bytes, read %d: want the same whole number of %d-byte files, at least 1 MiB", w.Bytes, r.Bytes, size)
	}
	if w.Seconds <= 0 || r.Seconds <= 0 {
		t.Errorf("seconds %g and %g", w.Seconds, r.Seconds)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d entries left in the directory", len(left))
	}
	b := ParquetBound(Ceiling{Bytes: 600, Seconds: 2}, Ceiling{Bytes: 600, Seconds: 1}, 2)
	if b.Bytes != 600 || b.Seconds != 1.5 {
		t.Errorf("bound %d bytes in %g s, want 600 bytes in 1.5 s", b.Bytes, b.Seconds)
	}
}

// BenchmarkParquetCeilings measures the Parquet ceilings over 64 MiB: the
// write and read rates are reported as write-MB/s and read-MB/s.
func BenchmarkParquetCeilings(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		w, r, err := ParquetCeilings(context.Background(), dir, 64<<20)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(w.MBps(), "write-MB/s")
		b.ReportMetric(r.MBps(), "read-MB/s")
	}
}
