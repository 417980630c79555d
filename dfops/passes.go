package dfops

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// MaxPasses bounds the buckets of RankBuckets: a sort in passes reads its
// input once per bucket.
const MaxPasses = 64

// RankBuckets splits the rows of keys into k buckets of consecutive ranks
// in SortStable's order (1 <= k <= MaxPasses, and at most one bucket per
// row): row i goes to bucket b[i], which holds ranks [b*n/k, (b+1)*n/k).
// Sorting each bucket's rows with SortStable, kept in their input order,
// and writing the buckets in order gives SortStable's order of all the
// rows, equal keys split across buckets included: a sort in passes that
// holds one bucket's rows at a time, and the key column of all of them.
func RankBuckets(keys arrow.Array, k int) ([]uint8, error) {
	if k < 1 || k > MaxPasses {
		return nil, fmt.Errorf("%w: %d buckets (1 to %d)", ErrSpec, k, MaxPasses)
	}
	if keys.Len() >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d rows to sort (at most %d)", ErrTooLarge, keys.Len(), math.MaxInt32-1)
	}
	order, err := SortIndices(keys)
	if err != nil {
		return nil, err
	}
	n := int64(len(order))
	b := make([]uint8, n)
	for r, g := range order {
		b[g] = uint8(int64(r) * int64(k) / n)
	}
	return b, nil
}

// TakeRows returns rows of rec, in the order given, as a new record from
// mem (memory.DefaultAllocator when nil) that the caller must Release.
func TakeRows(mem memory.Allocator, rec arrow.Record, rows []int32) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	for _, r := range rows {
		if r < 0 || int64(r) >= rec.NumRows() {
			return nil, fmt.Errorf("%w: row %d of a record of %d rows", ErrSpec, r, rec.NumRows())
		}
	}
	return takeRecord(mem, rec, rows)
}
