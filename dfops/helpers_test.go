package dfops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// gen makes one column's value for row i; nil is a null.
type gen func(rng *rand.Rand, i int) any

// testCol is a column of a generated record.
type testCol struct {
	name string
	typ  arrow.DataType
	gen  gen
}

// buildRecord makes a record of n rows from the column generators.
func buildRecord(t testing.TB, mem memory.Allocator, rng *rand.Rand, n int, cols []testCol) arrow.Record {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i := range n {
		for ci, c := range cols {
			appendValue(t, b.Field(ci), c.gen(rng, i))
		}
	}
	return b.NewRecord()
}

func appendValue(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.(int)))
	case *array.Int32Builder:
		b.Append(int32(v.(int)))
	case *array.Int64Builder:
		b.Append(int64(v.(int)))
	case *array.Uint16Builder:
		b.Append(uint16(v.(int)))
	case *array.Uint64Builder:
		b.Append(uint64(v.(int)))
	case *array.Float16Builder:
		b.Append(float16.New(float32(v.(float64))))
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append([]byte(v.(string)))
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v.(int)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int)))
	default:
		t.Fatalf("appendValue: no case for %T", b)
	}
}

// value returns row i of arr as a Go value: int64, uint64, float64, bool or
// string; nil for a null.
func value(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	if at, ok := intAt(arr); ok {
		return at(i)
	}
	if at, ok := floatAt(arr); ok {
		return at(i)
	}
	if b, ok := arr.(*array.Boolean); ok {
		return b.Value(i)
	}
	if at, ok := uintAt(arr); ok {
		return at(i)
	}
	switch a := arr.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return a.ValueString(i)
	case *array.LargeBinary:
		return a.ValueString(i)
	}
	panic(fmt.Sprintf("value: no case for %s", arr.DataType()))
}

// rowsOf returns every row of rec as Go values.
func rowsOf(rec arrow.Record) [][]any {
	rows := make([][]any, rec.NumRows())
	for i := range rows {
		for _, c := range rec.Columns() {
			rows[i] = append(rows[i], value(c, i))
		}
	}
	return rows
}

// rowString prints a row; numbers print alike whatever their width, so a
// key cast from int32 to int64 prints the same.
func rowString(row []any) string {
	return fmt.Sprint(row...)
}

// refKey is a row's key as the reference join compares it: numbers as
// float64, strings as strings; ok is false when a key is null or NaN.
func refKey(row []any, cols []int) (string, bool) {
	key := ""
	for _, c := range cols {
		switch v := row[c].(type) {
		case nil:
			return "", false
		case float64:
			if math.IsNaN(v) {
				return "", false
			}
			key += fmt.Sprintf("%g|", v)
		case int64:
			key += fmt.Sprintf("%g|", float64(v))
		case uint64:
			key += fmt.Sprintf("%g|", float64(v))
		default:
			key += fmt.Sprintf("%q|", v)
		}
	}
	return key, true
}
