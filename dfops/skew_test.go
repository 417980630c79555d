package dfops

import (
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// oneKeyRecord is n rows of (k int64 = 7, v int64 = row).
func oneKeyRecord(mem memory.Allocator, name string, n int) arrow.Record {
	sch := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: name, Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, sch)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(7)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecord()
}

// TestStreamJoinSkewedKeyBounded: every row of both sides on one key, 4,000
// rows (64 KB) a side: 16 million output rows, whose pairs alone took 128 MB
// when a lead record's pairs were built whole. The join now holds one
// batch of pairs at a time: the Go heap stays within a few batches of the
// inputs, and every pair comes out once.
func TestStreamJoinSkewedKeyBounded(t *testing.T) {
	const n, batch = 4000, 4096
	left, right := oneKeyRecord(memory.DefaultAllocator, "a", n), oneKeyRecord(memory.DefaultAllocator, "b", n)
	defer left.Release()
	defer right.Release()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, uint64(0)
	var rows, calls int64
	sj, err := NewStreamJoin(nil, left.Schema(), right.Schema(), right, JoinSpec{LeftOn: []string{"k"}, RightOn: []string{"k"}, How: Inner}, batch, func(rec arrow.Record) error {
		rows += rec.NumRows()
		if calls++; calls%64 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Release()
	if err := sj.Add(left); err != nil {
		t.Fatal(err)
	}
	if err := sj.Finish(); err != nil {
		t.Fatal(err)
	}
	if rows != n*n {
		t.Fatalf("%d rows out, want %d", rows, n*n)
	}
	grown := int64(peak) - int64(base)
	t.Logf("heap in use grew by at most %d KiB over %d batches", grown>>10, calls)
	if grown > 32<<20 {
		t.Errorf("heap in use grew by %d MiB joining one key: the pairs (%d MB) are built whole", grown>>20, 8*n*n/1_000_000)
	}
}
