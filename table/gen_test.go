package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

func TestGenTaskRowsCoverIDs(t *testing.T) {
	cases := []struct {
		name        string
		rows        int64
		tasks       int
		wantMaxRows int64
	}{
		{"even", 1000, 10, 100},
		{"uneven", 1003, 10, 101},
		{"fewer rows than tasks", 3, 5, 1},
		{"no rows", 0, 4, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := GenConfig{Rows: c.rows}
			var next int64
			for task := range c.tasks {
				rows, first := GenTaskRows(cfg, task, c.tasks)
				if first != next || rows > c.wantMaxRows {
					t.Fatalf("task %d: %d rows from %d, want from %d and at most %d", task, rows, first, next, c.wantMaxRows)
				}
				next += rows
			}
			if next != c.rows {
				t.Fatalf("tasks cover %d rows, want %d", next, c.rows)
			}
			if rows, _ := GenTaskRows(cfg, c.tasks, c.tasks); rows != 0 {
				t.Fatalf("task out of range has %d rows", rows)
			}
		})
	}
}

func TestGenTaskDeterministic(t *testing.T) {
	mem := checkedMem(t)
	cfg := GenConfig{Rows: 1000, Seed: 42, KeyCardinality: 10, PayloadBytes: 13}
	a := GenTask(mem, cfg, 2, 3)
	defer a.Release()
	b := GenTask(mem, cfg, 2, 3)
	defer b.Release()
	sameRecords(t, a, b)
	other := GenTask(mem, cfg, 1, 3)
	defer other.Release()
	if array.RecordEqual(a, other) {
		t.Fatal("tasks 1 and 2 generated the same data")
	}
	keys := a.Column(0).(*array.Int64).Int64Values()
	ids := a.Column(1).(*array.Int64).Int64Values()
	names := a.Column(3).(*array.String)
	_, first := GenTaskRows(cfg, 2, 3)
	for i, k := range keys {
		if k < 0 || k >= 10 || ids[i] != first+int64(i) || len(names.Value(i)) != 13 {
			t.Fatalf("row %d: key %d id %d name %q", i, k, ids[i], names.Value(i))
		}
	}
	if !a.Schema().Equal(GenSchema()) {
		t.Fatalf("schema %v", a.Schema())
	}
}

// BenchmarkGenTask generates one task of the demo's shape (4096 rows of
// 128 bytes): the client side of every demo and bench run.
func BenchmarkGenTask(b *testing.B) {
	cfg := GenConfig{Rows: 4096 * 1000, PayloadBytes: 100}
	b.ReportAllocs()
	b.SetBytes(4096 * GenRowBytes(cfg))
	for i := range b.N {
		GenTask(nil, cfg, i%1000, 1000).Release()
	}
}

// TestNameBytesMatchesAlphabet checks the eight-lane mapping against the
// alphabet, lane by lane, for every five-bit value in every lane.
func TestNameBytesMatchesAlphabet(t *testing.T) {
	for v := range uint64(32) {
		for lane := range 8 {
			r := v<<(8*lane) | 0xe0e0e0e0e0e0e0e0 // high bits of every byte set: must be ignored
			got := byte(nameBytes(r) >> (8 * lane))
			if got != nameAlphabet[v] {
				t.Fatalf("value %d in lane %d: %q, want %q", v, lane, got, nameAlphabet[v])
			}
		}
	}
}
