package job

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

// TestVerifier feeds a Verifier a shuffle's rows by partition, as a read
// would, and checks that it passes them whole and fails a row missing
// (first, last, one past a word), a row twice, and a row in the wrong
// partition, each naming the row.
func TestVerifier(t *testing.T) {
	const rows, parts = 1000, 7 // not a multiple of 64: the last word is partial
	cfg := table.GenConfig{Rows: rows, PayloadBytes: 4, Seed: 5}
	rec := table.GenTask(memory.DefaultAllocator, cfg, 0, 1)
	defer rec.Release()
	part, err := table.NewPartitioner(rec.Schema(), table.Rule{Kind: table.Hash, Columns: []string{"key"}}, parts)
	if err != nil {
		t.Fatal(err)
	}
	pids, err := part.Partition(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	// run feeds rec's rows by partition, after edit picks each partition's rows.
	run := func(edit func(p int, rows []int) []int) error {
		v := NewVerifier(part, rows, 1, 0)
		if err := v.Input(rec); err != nil {
			t.Fatal(err)
		}
		for p := range parts {
			var in []int
			for r, q := range pids {
				if int(q) == p {
					in = append(in, r)
				}
			}
			if err := v.Output(p, takeRows(t, rec, edit(p, in))); err != nil {
				return err
			}
		}
		return v.Check()
	}
	if err := run(func(_ int, r []int) []int { return r }); err != nil {
		t.Fatalf("every row once: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(p int, r []int) []int
		want string
	}{
		{"row 0 missing", dropRow(0), "row id 0 never arrived"},
		{"row 64 missing", dropRow(64), "row id 64 never arrived"},
		{"last row missing", dropRow(rows - 1), "row id 999 never arrived"},
		{"row 5 twice", func(_ int, r []int) []int {
			for _, x := range r {
				if x == 5 {
					return append(r, 5)
				}
			}
			return r
		}, "row id 5 seen twice"},
		{"a row in another partition", func(p int, r []int) []int {
			if p == 0 {
				return append(r, otherThan(pids, 0))
			}
			return r
		}, "read from partition 0"},
	} {
		if err := run(c.edit); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// dropRow returns an edit that leaves row id out.
func dropRow(id int) func(int, []int) []int {
	return func(_ int, r []int) []int {
		out := r[:0:0]
		for _, x := range r {
			if x != id {
				out = append(out, x)
			}
		}
		return out
	}
}

// otherThan returns a row not in partition p.
func otherThan(pids []uint32, p uint32) int {
	for r, q := range pids {
		if q != p {
			return r
		}
	}
	return -1
}

// takeRows returns rec's rows at rows, in that order.
func takeRows(t *testing.T, rec arrow.Record, rows []int) arrow.Record {
	t.Helper()
	ranges := make([]table.RowRange, len(rows))
	for i, r := range rows {
		ranges[i] = table.RowRange{Rec: rec, Off: int64(r), Rows: 1}
	}
	out, err := table.ConcatRanges(memory.DefaultAllocator, rec.Schema(), ranges)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(out.Release)
	return out
}
