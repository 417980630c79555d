package testkit

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestWaitFor: WaitFor returns once the condition holds, and fails a test
// whose condition never does.
func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, time.Minute, "three polls", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("%d polls, want 3", n)
	}
	ft := &fatalT{TB: t}
	func() {
		defer func() { _ = recover() }()
		WaitFor(ft, time.Millisecond, "never", func() bool { return false })
	}()
	if !ft.failed {
		t.Fatal("WaitFor did not fail on a condition that never holds")
	}
}

// fatalT records Fatalf and stops the waiting goroutine with a panic.
type fatalT struct {
	testing.TB
	failed bool
}

func (f *fatalT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fatalT) Helper()               {}

// TestRecords: the builders make the records they describe, and free all
// they allocate once released.
func TestRecords(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := Int64Range(mem, "v", 10, 4)
	got := rec.Column(0).(*array.Int64).Int64Values()
	if rec.Schema().Field(0).Name != "v" || len(got) != 4 || got[0] != 10 || got[3] != 13 {
		t.Fatalf("Int64Range: column %s holds %v, want v: 10..13", rec.Schema().Field(0).Name, got)
	}
	rec.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	rec = Build(mem, schema, 3, func(i int, b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).Append(string(rune('a' + i)))
	})
	if rec.NumRows() != 3 || rec.Column(0).(*array.String).Value(2) != "c" {
		t.Fatalf("Build: %d rows, last %q; want 3 rows, last \"c\"", rec.NumRows(), rec.Column(0).(*array.String).Value(2))
	}
	rec.Release()
}
