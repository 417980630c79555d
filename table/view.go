package table

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// ColumnView is one column of a record with its buffers resolved once: the
// validity bitmap and the values of its visible rows, as plain slices. A
// receiver resolves the views of a decoded entry once and shares them among
// the entry's pieces, so that gathering thousands of small row ranges from
// thousands of records (an output partition of a wide shuffle) reads the
// bytes it copies and little else: no interface calls and no walk from
// record to array to data to buffer per range and column.
type ColumnView struct {
	// Valid is the validity bitmap, nil when the column has no nulls; row i
	// is bit ValidOff+i.
	Valid    []byte
	ValidOff int
	// Fixed are the values of a fixed-width column from row 0; Bits and
	// BitOff those of a bool column (row i is bit BitOff+i).
	Fixed  []byte
	Bits   []byte
	BitOff int
	// Offs32 or Offs64 are a variable-width column's rows+1 offsets into
	// Data.
	Offs32 []int32
	Offs64 []int64
	Data   []byte
}

// ViewOf resolves the column views of rec. The views alias rec's buffers:
// they are valid while the caller holds a reference to rec.
func ViewOf(rec arrow.Record) []ColumnView {
	out := make([]ColumnView, rec.NumCols())
	for c := range out {
		out[c] = viewColumn(rec.Column(c))
	}
	return out
}

// viewColumn resolves one array; an unsupported type gets an empty view
// (ConcatRanges refuses the type before it reads the view).
func viewColumn(arr arrow.Array) ColumnView {
	var v ColumnView
	v.Valid, v.ValidOff = validity(arr)
	ct, ok := typeOf(arr.DataType())
	if !ok {
		return v
	}
	switch ct.class {
	case classBool:
		v.Bits, v.BitOff = boolBits(arr)
	case classVar32:
		v.Offs32, v.Data = var32(arr)
	case classVar64:
		v.Offs64, v.Data = var64(arr)
	default:
		v.Fixed = fixedBytes(arr, ct.width)
	}
	return v
}
