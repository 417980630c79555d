package dfops

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// family groups the types whose values compare with one another.
type family int

const (
	famNone family = iota
	famSigned
	famUnsigned
	famFloat
	famBool
	famString
	famBinary
	famDate
	famTimestamp
)

// familyOf returns dt's family, famNone for types that cannot be keys.
func familyOf(dt arrow.DataType) family {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return famSigned
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return famUnsigned
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return famFloat
	case arrow.BOOL:
		return famBool
	case arrow.STRING, arrow.LARGE_STRING:
		return famString
	case arrow.BINARY, arrow.LARGE_BINARY:
		return famBinary
	case arrow.DATE32, arrow.DATE64:
		return famDate
	case arrow.TIMESTAMP:
		return famTimestamp
	}
	return famNone
}

// CommonKeyType returns the type two key columns are cast to before they are
// compared: the type itself when both are equal; int64 for two integer types
// (uint64 when both are unsigned; uint64 with a signed type is refused, as
// no type holds both); float64 for floats, or an integer and a float; string
// for string and large_string; binary for binary and large_binary; date64
// for date32 and date64; the finer unit for timestamps of one time zone.
// Other pairs give an error wrapping ErrKeyType.
func CommonKeyType(left, right arrow.DataType) (arrow.DataType, error) {
	fl, fr := familyOf(left), familyOf(right)
	if fl == famNone || fr == famNone {
		return nil, fmt.Errorf("%w: %s and %s: a key must be an integer, float, bool, string, binary, date or timestamp", ErrKeyType, left, right)
	}
	if arrow.TypeEqual(left, right) {
		return left, nil
	}
	if t := commonNumeric(left, right, fl, fr); t != nil {
		return t, nil
	}
	if t := commonOther(left, right, fl, fr); t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%w: %s and %s", ErrKeyType, left, right)
}

// commonNumeric is CommonKeyType for two numeric types, nil for others.
func commonNumeric(left, right arrow.DataType, fl, fr family) arrow.DataType {
	num := func(f family) bool { return f == famSigned || f == famUnsigned || f == famFloat }
	switch {
	case !num(fl) || !num(fr):
		return nil
	case fl == famFloat || fr == famFloat:
		return arrow.PrimitiveTypes.Float64
	case fl == famUnsigned && fr == famUnsigned:
		return arrow.PrimitiveTypes.Uint64
	case left.ID() == arrow.UINT64 || right.ID() == arrow.UINT64:
		return nil
	}
	return arrow.PrimitiveTypes.Int64
}

// commonOther is CommonKeyType for two non-numeric types of one family.
func commonOther(left, right arrow.DataType, fl, fr family) arrow.DataType {
	if fl != fr {
		return nil
	}
	switch fl {
	case famString:
		return arrow.BinaryTypes.String
	case famBinary:
		return arrow.BinaryTypes.Binary
	case famDate:
		return arrow.FixedWidthTypes.Date64
	case famTimestamp:
		tl, tr := left.(*arrow.TimestampType), right.(*arrow.TimestampType)
		if tl.TimeZone != tr.TimeZone {
			return nil
		}
		return &arrow.TimestampType{Unit: max(tl.Unit, tr.Unit), TimeZone: tl.TimeZone}
	}
	return nil
}

// CastRecord returns rec with its columns cast to the types of schema, which
// must have rec's column names in order; columns whose type is already right
// are shared, not copied. The casts are those CommonKeyType chooses
// (widening integers, integers or floats to float64, large to small strings
// and binaries, dates, timestamp units); a large_string column whose data
// exceeds 2 GiB cannot become a string. The caller must Release the result.
func CastRecord(mem memory.Allocator, rec arrow.Record, schema *arrow.Schema) (arrow.Record, error) {
	if int(rec.NumCols()) != schema.NumFields() {
		return nil, fmt.Errorf("%w: record has %d columns, schema %d", ErrColumn, rec.NumCols(), schema.NumFields())
	}
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() { releaseAll(cols) }()
	for i, f := range schema.Fields() {
		if rec.ColumnName(i) != f.Name {
			return nil, fmt.Errorf("%w: column %d is %q, schema says %q", ErrColumn, i, rec.ColumnName(i), f.Name)
		}
		c, err := castArray(mem, rec.Column(i), f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		cols = append(cols, c)
	}
	return array.NewRecord(schema, cols, rec.NumRows()), nil
}

// castArray returns arr cast to dt (arr itself, retained, when it has that
// type already). The caller must Release the result.
func castArray(mem memory.Allocator, arr arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(arr.DataType(), dt) {
		arr.Retain()
		return arr, nil
	}
	if f16, ok := arr.(*array.Float16); ok && dt.ID() == arrow.FLOAT64 {
		return castFloat16(mem, f16), nil
	}
	ctx := compute.WithAllocator(context.Background(), mem)
	out, err := compute.CastArray(ctx, arr, compute.UnsafeCastOptions(dt))
	if err != nil {
		return nil, fmt.Errorf("%w: cannot cast %s to %s: %v", ErrUnsupportedType, arr.DataType(), dt, err)
	}
	return out, nil
}

// castFloat16 widens a float16 array to float64 (Arrow's cast lacks it).
func castFloat16(mem memory.Allocator, arr *array.Float16) arrow.Array {
	b := array.NewFloat64Builder(mem)
	defer b.Release()
	b.Reserve(arr.Len())
	for i := range arr.Len() {
		if arr.IsNull(i) {
			b.AppendNull()
			continue
		}
		b.Append(float64(arr.Value(i).Float32()))
	}
	return b.NewArray()
}

func releaseAll(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}
