package flightproto

import (
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RecvMsg is a gRPC stream's: what a pooled Reader receives through.
func (w *codecWire) RecvMsg(m any) error {
	if len(w.msgs) == 0 {
		return io.EOF
	}
	err := w.c.Unmarshal(w.msgs[0], m)
	w.msgs = w.msgs[1:]
	return err
}

// TestPooledReader reads batches through a pooled Reader: each batch's
// message buffer goes back to the pool (where test binaries overwrite it
// with 0xA5) exactly when the last reference to the batch is released,
// not before: a batch Retained past later batches keeps its values, and
// app metadata outlives its batch.
func TestPooledReader(t *testing.T) {
	sizes := []int64{3, 1000, 0, 50000, 7}
	w := &codecWire{c: newCodec(&bufferPool{poison: true})}
	writeIntsWith(t, NewSharingWriter, memory.DefaultAllocator, w, sizes, 1)
	rdr, err := NewPooledReader(w, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if rdr.pooled == nil {
		t.Fatal("a stream with RecvMsg read unpooled")
	}
	var kept arrow.Record
	var released []int64 // values of the previous batch, which Next releases
	var at int64
	for i := 0; rdr.Next(); i++ {
		checkPoisoned(t, released)
		rec := rdr.Record()
		checkInts(t, rec, at)
		if i == 1 && string(rdr.LatestAppMetadata()) != "md" {
			t.Fatalf("batch 1: app metadata %q, want md", rdr.LatestAppMetadata())
		}
		released = nil
		if rec.NumRows() > 0 {
			released = rec.Column(0).(*array.Int64).Int64Values()
		}
		if i == 3 {
			rec.Retain()
			kept, released = rec, nil
		}
		at += sizes[i]
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	if string(rdr.LatestAppMetadata()) != "" && string(rdr.LatestAppMetadata()) != "md" {
		t.Fatalf("app metadata %q after its batch was released", rdr.LatestAppMetadata())
	}
	checkInts(t, kept, 1003) // the retained batch is intact after the rest were read
	vals := kept.Column(0).(*array.Int64).Int64Values()
	kept.Release()
	checkPoisoned(t, vals)
}

// checkPoisoned fails unless vals (a slice of a released batch) was
// overwritten by the pool.
func checkPoisoned(t *testing.T, vals []int64) {
	t.Helper()
	const poison = int64(-0x5a5a5a5a5a5a5a5b) // 0xA5 in every byte
	for j, v := range vals {
		if v != poison {
			t.Fatalf("value %d of a released batch is %#x: its buffer did not go back to the pool", j, v)
		}
	}
}

// TestPooledReaderRelease: a batch's buffer waits for every reference to
// it, a slice of a column included.
func TestPooledReaderRelease(t *testing.T) {
	w := &codecWire{c: newCodec(&bufferPool{poison: true})}
	writeInts(t, w, []int64{4096, 10})
	rdr, err := NewPooledReader(w, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	slice := array.NewSlice(rdr.Record().Column(0), 100, 200).(*array.Int64)
	if !rdr.Next() {
		t.Fatal(rdr.Err())
	}
	for j, v := range slice.Int64Values() {
		if v != int64(100+j) {
			t.Fatalf("slice value %d is %d after its batch was released, want %d", j, v, 100+j)
		}
	}
	vals := slice.Int64Values()
	slice.Release()
	checkPoisoned(t, vals)
}
