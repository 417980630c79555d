package dfops

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SortStable returns rec's rows ordered by column, ascending: equal keys
// keep their input order, and rows whose key is null (or a float NaN) come
// last, in input order. Numbers compare by value (dates and timestamps in
// their stored unit), strings and binaries bytewise, false before true. The
// result is allocated from mem (memory.DefaultAllocator when nil) and owned
// by the caller; when rec is in that order already, it is rec itself, with
// a reference the caller owns.
func SortStable(mem memory.Allocator, rec arrow.Record, column string) (arrow.Record, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	ci, err := columnIndex(rec.Schema(), "record", column)
	if err != nil {
		return nil, err
	}
	if rec.NumRows() >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d rows to sort (at most %d)", ErrTooLarge, rec.NumRows(), math.MaxInt32-1)
	}
	if inOrder(rec.Column(ci)) {
		rec.Retain() // the sort is the identity: no copy
		return rec, nil
	}
	order, err := SortIndices(rec.Column(ci))
	if err != nil {
		return nil, fmt.Errorf("column %q: %w", column, err)
	}
	return takeRecord(mem, rec, order)
}

// inOrder reports whether arr is already in SortStable's order: its present
// keys non-decreasing, every missing one (null, float NaN) after them. Data
// sorted before (a set-index of sorted input) and a partition whose keys are
// all one value are; reading it once is far cheaper than sorting and copying
// it.
func inOrder(arr arrow.Array) bool {
	if a, ok := arr.(*array.Int64); ok && a.NullN() == 0 {
		return slices.IsSorted(a.Int64Values())
	}
	if at, ok := intAt(arr); ok {
		return ordered(arr.Len(), at, arr.IsNull)
	}
	if at, ok := uintAt(arr); ok {
		return ordered(arr.Len(), at, arr.IsNull)
	}
	if at, ok := floatAt(arr); ok {
		return ordered(arr.Len(), at, func(i int) bool { return arr.IsNull(i) || math.IsNaN(at(i)) })
	}
	if at := stringAt(arr); at != nil {
		return ordered(arr.Len(), at, arr.IsNull)
	}
	return false
}

// ordered reports whether rows 0..n-1 are in order: at(i) non-decreasing
// over the present rows, the missing ones all after them.
func ordered[T cmp.Ordered](n int, at func(int) T, missing func(int) bool) bool {
	var prev T
	seen, gap := false, false
	for i := range n {
		switch {
		case missing(i):
			gap = true
		case gap:
			return false
		default:
			v := at(i)
			if seen && cmp.Less(v, prev) {
				return false
			}
			prev, seen = v, true
		}
	}
	return true
}

// takeRecord gathers rows of rec into a new record.
func takeRecord(mem memory.Allocator, rec arrow.Record, rows []int32) (arrow.Record, error) {
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() { releaseAll(cols) }()
	for i, c := range rec.Columns() {
		out, err := gather(mem, picker{srcs: [2]arrow.Array{c}, a: rows})
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		cols = append(cols, out)
	}
	return array.NewRecord(rec.Schema(), cols, int64(len(rows))), nil
}

// SortIndices returns the row numbers of arr in SortStable's order.
// Fixed-width numeric keys are sorted by radix, the rest (and short
// arrays) by comparison.
func SortIndices(arr arrow.Array) ([]int32, error) {
	if arr.Len() >= radixMin {
		if order, ok := radixIndices(arr); ok {
			return order, nil
		}
	}
	return compareIndices(arr)
}

// compareIndices is SortIndices by comparison sort, for any sortable type.
func compareIndices(arr arrow.Array) ([]int32, error) {
	if at, ok := intAt(arr); ok {
		return order(arr.Len(), at, arr.IsNull), nil
	}
	if at, ok := uintAt(arr); ok {
		return order(arr.Len(), at, arr.IsNull), nil
	}
	if at, ok := floatAt(arr); ok {
		return order(arr.Len(), at, func(i int) bool { return arr.IsNull(i) || math.IsNaN(at(i)) }), nil
	}
	if s := stringsOf(arr); s != nil {
		return order(arr.Len(), func(i int) string { return s[i] }, arr.IsNull), nil
	}
	return nil, fmt.Errorf("%w: cannot sort %s", ErrUnsupportedType, arr.DataType())
}

// intAt returns the values of a signed integer, date or timestamp array.
func intAt(arr arrow.Array) (func(int) int64, bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return ints(a.Int8Values()), true
	case *array.Int16:
		return ints(a.Int16Values()), true
	case *array.Int32:
		return ints(a.Int32Values()), true
	case *array.Int64:
		return ints(a.Int64Values()), true
	case *array.Date32:
		return ints(a.Date32Values()), true
	case *array.Date64:
		return ints(a.Date64Values()), true
	case *array.Timestamp:
		return ints(a.TimestampValues()), true
	}
	return nil, false
}

// uintAt returns the values of an unsigned integer array, or of a bool
// array as 0 and 1.
func uintAt(arr arrow.Array) (func(int) uint64, bool) {
	switch a := arr.(type) {
	case *array.Uint8:
		return uints(a.Uint8Values()), true
	case *array.Uint16:
		return uints(a.Uint16Values()), true
	case *array.Uint32:
		return uints(a.Uint32Values()), true
	case *array.Uint64:
		return uints(a.Uint64Values()), true
	case *array.Boolean:
		return func(i int) uint64 {
			if a.Value(i) {
				return 1
			}
			return 0
		}, true
	}
	return nil, false
}

// floatAt returns a float array's values as float64.
func floatAt(arr arrow.Array) (func(int) float64, bool) {
	switch a := arr.(type) {
	case *array.Float16:
		return func(i int) float64 { return float64(a.Value(i).Float32()) }, true
	case *array.Float32:
		return func(i int) float64 { return float64(a.Value(i)) }, true
	case *array.Float64:
		return a.Value, true
	}
	return nil, false
}

func ints[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Date64 | arrow.Timestamp](v []T) func(int) int64 {
	return func(i int) int64 { return int64(v[i]) }
}

func uints[T uint8 | uint16 | uint32 | uint64](v []T) func(int) uint64 {
	return func(i int) uint64 { return uint64(v[i]) }
}

// keyed is one row's sort key and row number.
type keyed[T cmp.Ordered] struct {
	v T
	i int32
}

// order sorts rows 0..n-1 by at(i), ties by row number (so the sort is
// stable), and appends the missing rows in order.
func order[T cmp.Ordered](n int, at func(int) T, missing func(int) bool) []int32 {
	ks := make([]keyed[T], 0, n)
	var miss []int32
	for i := range n {
		if missing(i) {
			miss = append(miss, int32(i))
		} else {
			ks = append(ks, keyed[T]{at(i), int32(i)})
		}
	}
	slices.SortFunc(ks, func(a, b keyed[T]) int {
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]int32, 0, n)
	for _, k := range ks {
		out = append(out, k.i)
	}
	return append(out, miss...)
}
