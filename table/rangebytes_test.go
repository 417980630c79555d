package table

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRangesBytesMatchesGather checks RangesBytes against RecordBytes of
// what ConcatRanges builds, on random records of every supported type,
// with and without nulls, sliced, as records or views alone, and empty
// ranges.
func TestRangesBytesMatchesGather(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 60 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			schema := randomAppendSchema(rng)
			recs := randomAppendRecords(mem, schema, rng)
			defer releaseAll(recs)
			var ranges []RowRange
			for range rng.IntN(6) {
				r := randomRowRange(recs, rng)
				switch rng.IntN(3) {
				case 0:
					r.Cols = nil // ConcatRanges resolves the views
				case 1:
					r = RowRange{Cols: r.Cols, Len: r.Rec.NumRows(), Off: r.Off, Rows: r.Rows}
				}
				ranges = append(ranges, r)
			}
			got, err := ConcatRanges(mem, schema, ranges)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if want, est := RecordBytes(got), RangesBytes(schema, ranges); est != want {
				t.Fatalf("RangesBytes = %d, RecordBytes of the gather = %d", est, want)
			}
		})
	}
}
