package limits

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

// TestGateWaits: a batch larger than the gate overdraws it; a second
// put waits before it reads while the first holds that batch, and reads
// once the first moves on (the first then waits for its next read until
// the second is done).
func TestGateWaits(t *testing.T) {
	rec := int64Record(1000) // ~8 KB: costs twice that while cut, more than the gate
	defer rec.Release()
	cost := 2 * table.RecordBytes(rec)
	g := NewGate(10000, 10000)
	ctx := context.Background()
	a, b := g.Hold(), g.Hold()
	if _, err := a.Read(ctx, once(rec)); err != nil {
		t.Fatal(err)
	}
	if used := g.b.Used(); used != cost {
		t.Fatalf("gate holds %d bytes after a batch of cost %d, want %[2]d", used, cost)
	}
	read := make(chan error, 1)
	go func() {
		_, err := b.Read(ctx, once(rec))
		read <- err
		b.Release() // the put ends
	}()
	select {
	case err := <-read:
		t.Fatalf("second put read while the first held the gate (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := a.Read(ctx, func() (arrow.Record, error) { return nil, io.EOF }); !errors.Is(err, io.EOF) {
		t.Fatalf("first put's end: %v", err)
	}
	a.Release()
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	if used := g.b.Used(); used != 0 {
		t.Fatalf("gate holds %d bytes once every put released, want 0", used)
	}
}

// TestGateCancel: a put whose context ends while it waits gets the
// context's error and holds nothing.
func TestGateCancel(t *testing.T) {
	g := NewGate(100, 100)
	a, b := g.Hold(), g.Hold()
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on a full gate: %v, want the context's deadline", err)
	}
	b.Release()
	a.Release()
	if used := g.b.Used(); used != 0 {
		t.Fatalf("gate holds %d bytes, want 0", used)
	}
}

// once returns rec on the first call, then io.EOF.
func once(rec arrow.Record) func() (arrow.Record, error) {
	done := false
	return func() (arrow.Record, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		return rec, nil
	}
}

// int64Record is a record of n int64 rows.
func int64Record(n int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecord()
}
