package flightproto

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/shufflenode/shufflenode/rechunk"
)

// TestChunkRecordAlloc checks that a chunk record built over allocated data
// carries the data as it is and frees it to its allocator on the last
// Release, not before.
func TestChunkRecordAlloc(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	dt, err := rechunk.ParseDType("<f8")
	if err != nil {
		t.Fatal(err)
	}
	c := rechunk.Chunk{DType: dt, Shape: []int64{4, 2}, Data: mem.Allocate(64)}
	for i := range c.Data {
		c.Data[i] = byte(i)
	}
	rec := ChunkRecordAlloc(c, mem)
	got, release, err := ChunkFromRecords(oneRecord(rec))
	if err != nil {
		t.Fatal(err)
	}
	rec.Release() // the chunk's hold is the last reference now
	if mem.CurrentAlloc() != 64 {
		t.Fatalf("data freed while the chunk holds it: %d bytes allocated", mem.CurrentAlloc())
	}
	if !bytes.Equal(got.Data, c.Data) || len(got.Shape) != 2 || got.Shape[0] != 4 {
		t.Fatalf("chunk from the record: shape %v, data equal %v", got.Shape, bytes.Equal(got.Data, c.Data))
	}
	release()
	mem.AssertSize(t, 0)
}

// oneRecord yields rec, then io.EOF.
func oneRecord(rec arrow.Record) func() (arrow.Record, error) {
	done := false
	return func() (arrow.Record, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return rec, nil
	}
}
