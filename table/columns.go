package table

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

// This file gives typed views of the visible rows of a column's buffers,
// honouring the array's offset, without copying.

// fixedBytes returns the value bytes of the visible rows of a fixed-width
// array of width bytes per value.
func fixedBytes(arr arrow.Array, width int) []byte {
	d := arr.Data()
	n := d.Len()
	if n == 0 {
		return nil
	}
	off := d.Offset()
	return d.Buffers()[1].Bytes()[off*width : (off+n)*width]
}

// validity returns the validity bitmap and bit offset of arr, or nil when
// arr has no nulls.
func validity(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	d := arr.Data()
	return d.Buffers()[0].Bytes(), d.Offset()
}

// isValid reports whether row i is valid given validity's result.
func isValid(bitmap []byte, off, i int) bool {
	return bitmap == nil || bitutil.BitIsSet(bitmap, off+i)
}

// boolBits returns the value bitmap and bit offset of a bool array.
func boolBits(arr arrow.Array) ([]byte, int) {
	d := arr.Data()
	if d.Len() == 0 {
		return nil, 0
	}
	return d.Buffers()[1].Bytes(), d.Offset()
}

// var32 returns the offsets (rows+1 entries) and data of a string or binary
// array.
func var32(arr arrow.Array) ([]int32, []byte) {
	d := arr.Data()
	n, off := d.Len(), d.Offset()
	if n == 0 {
		return []int32{0}, nil
	}
	offs := arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+n+1]
	return offs, bufBytes(d, 2)
}

// var64 returns the offsets (rows+1 entries) and data of a large_string or
// large_binary array.
func var64(arr arrow.Array) ([]int64, []byte) {
	d := arr.Data()
	n, off := d.Len(), d.Offset()
	if n == 0 {
		return []int64{0}, nil
	}
	offs := arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off : off+n+1]
	return offs, bufBytes(d, 2)
}

// bufBytes returns the bytes of buffer i of d, nil when absent.
func bufBytes(d arrow.ArrayData, i int) []byte {
	bufs := d.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

// Typed views of fixed-width value bytes.
func asI8(b []byte) []int8         { return arrow.Int8Traits.CastFromBytes(b) }
func asI16(b []byte) []int16       { return arrow.Int16Traits.CastFromBytes(b) }
func asI32(b []byte) []int32       { return arrow.Int32Traits.CastFromBytes(b) }
func asI64(b []byte) []int64       { return arrow.Int64Traits.CastFromBytes(b) }
func asU8(b []byte) []uint8        { return b }
func asU16(b []byte) []uint16      { return arrow.Uint16Traits.CastFromBytes(b) }
func asU32(b []byte) []uint32      { return arrow.Uint32Traits.CastFromBytes(b) }
func asU64(b []byte) []uint64      { return arrow.Uint64Traits.CastFromBytes(b) }
func asF16(b []byte) []float16.Num { return arrow.Float16Traits.CastFromBytes(b) }
func asF32(b []byte) []float32     { return arrow.Float32Traits.CastFromBytes(b) }
func asF64(b []byte) []float64     { return arrow.Float64Traits.CastFromBytes(b) }
