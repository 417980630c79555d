package testkit

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Int64Record returns a record of one non-nullable int64 column, name,
// holding vals, allocated from mem. The caller releases it.
func Int64Record(mem memory.Allocator, name string, vals ...int64) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.AppendValues(vals, nil)
	col := b.NewArray()
	defer col.Release()
	return array.NewRecord(schema, []arrow.Array{col}, int64(len(vals)))
}

// Int64Range is Int64Record of the n values from, from+1, ...
func Int64Range(mem memory.Allocator, name string, from, n int64) arrow.Record {
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = from + int64(i)
	}
	return Int64Record(mem, name, vals...)
}

// Build returns a record of schema with rows rows allocated from mem,
// calling fill for each row to append its values to b's fields. The caller
// releases it.
func Build(mem memory.Allocator, schema *arrow.Schema, rows int, fill func(row int, b *array.RecordBuilder)) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range rows {
		fill(i, b)
	}
	return b.NewRecord()
}
