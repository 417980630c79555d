package table

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

// rangeRows applies a Range rule: each key goes to the number of divisions
// less than or equal to it; nulls and NaNs go to the last partition.
func (p *Partitioner) rangeRows(arr arrow.Array, out []uint32) {
	ct, d := p.c.types[0], &p.c.div
	switch ct.class {
	case classSigned:
		rangeFixedSigned(arr.DataType().ID(), fixedBytes(arr, ct.width), d.ord, out)
	case classUnsigned:
		rangeFixedUnsigned(arr.DataType().ID(), fixedBytes(arr, ct.width), d.ord, out)
	case classFloat:
		rangeFixedFloat(arr.DataType().ID(), fixedBytes(arr, ct.width), d.ord, out)
	case classBool:
		bits, off := boolBits(arr)
		for i := range out {
			out[i] = upper(d.u, bitVal(bits, off+i))
		}
	case classVar32:
		offs, data := var32(arr)
		rangeVar(offs, data, d.s, out)
	case classVar64:
		offs, data := var64(arr)
		rangeVar(offs, data, d.s, out)
	}
	fillNulls(arr, out, uint32(p.c.p-1))
}

// upper returns the number of divisions <= v (divisions ascend).
func upper[T cmp.Ordered](div []T, v T) uint32 {
	lo, hi := 0, len(div)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if div[m] <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return uint32(lo)
}

// rangeSigned places signed keys widened to int64 (div: their order keys).
func rangeSigned[T signed](vals []T, div *keyIndex, out []uint32) {
	placeEach(vals, func(v T) uint64 { return signedKey(int64(v)) }, div, out)
}

// rangeUnsigned places unsigned keys widened to uint64.
func rangeUnsigned[T unsigned](vals []T, div *keyIndex, out []uint32) {
	placeEach(vals, func(v T) uint64 { return uint64(v) }, div, out)
}

// rangeFloat places float keys widened to float64 (div: their order keys);
// NaN goes last.
func rangeFloat[T floating](vals []T, div *keyIndex, out []uint32) {
	placeEach(vals, func(v T) uint64 { return floatKey(float64(v)) }, div, out)
}

// rangeVar places byte-string keys in bytewise order.
func rangeVar[O offset](offs []O, data []byte, div [][]byte, out []uint32) {
	for i := range out {
		v := data[offs[i]:offs[i+1]]
		lo, hi := 0, len(div)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if bytes.Compare(div[m], v) <= 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		out[i] = uint32(lo)
	}
}

// rangeFixedSigned dispatches a signed column to its typed loop.
func rangeFixedSigned(id arrow.Type, b []byte, div *keyIndex, out []uint32) {
	switch id {
	case arrow.INT8:
		rangeSigned(asI8(b), div, out)
	case arrow.INT16:
		rangeSigned(asI16(b), div, out)
	case arrow.INT32, arrow.DATE32:
		rangeSigned(asI32(b), div, out)
	default:
		rangeSigned(asI64(b), div, out)
	}
}

// rangeFixedUnsigned dispatches an unsigned column to its typed loop.
func rangeFixedUnsigned(id arrow.Type, b []byte, div *keyIndex, out []uint32) {
	switch id {
	case arrow.UINT8:
		rangeUnsigned(asU8(b), div, out)
	case arrow.UINT16:
		rangeUnsigned(asU16(b), div, out)
	case arrow.UINT32:
		rangeUnsigned(asU32(b), div, out)
	default:
		rangeUnsigned(asU64(b), div, out)
	}
}

// rangeFixedFloat dispatches a float column to its typed loop.
func rangeFixedFloat(id arrow.Type, b []byte, div *keyIndex, out []uint32) {
	switch id {
	case arrow.FLOAT16:
		placeEach(asF16(b), func(v float16.Num) uint64 { return floatKey(float64(v.Float32())) }, div, out)
	case arrow.FLOAT32:
		rangeFloat(asF32(b), div, out)
	default:
		rangeFloat(asF64(b), div, out)
	}
}

// columnRows applies a Column rule: the key is the partition. Nulls and
// values outside [0, P) are errors naming the first offending row.
func (p *Partitioner) columnRows(arr arrow.Array, out []uint32) error {
	name := p.schema.Field(p.c.cols[0]).Name
	if bitmap, off := validity(arr); bitmap != nil {
		for i := range out {
			if !isValid(bitmap, off, i) {
				return fmt.Errorf("%w: partition column %q row %d is null", ErrBadPartition, name, i)
			}
		}
	}
	ct := p.c.types[0]
	b := fixedBytes(arr, ct.width)
	var row int
	var bad string
	if ct.class == classSigned {
		row, bad = columnSigned(arr.DataType().ID(), b, uint64(p.c.p), out)
	} else {
		row, bad = columnUnsigned(arr.DataType().ID(), b, uint64(p.c.p), out)
	}
	if row >= 0 {
		return fmt.Errorf("%w: partition column %q row %d: value %s not in [0, %d)", ErrBadPartition, name, row, bad, p.c.p)
	}
	return nil
}

// colSigned copies signed partition ids, returning the first row outside
// [0, P) and its value, or -1.
func colSigned[T signed](vals []T, P uint64, out []uint32) (int, string) {
	for i, v := range vals {
		if v < 0 || uint64(v) >= P {
			return i, fmt.Sprint(v)
		}
		out[i] = uint32(v)
	}
	return -1, ""
}

// colUnsigned copies unsigned partition ids, returning the first row >= P
// and its value, or -1.
func colUnsigned[T unsigned](vals []T, P uint64, out []uint32) (int, string) {
	for i, v := range vals {
		if uint64(v) >= P {
			return i, fmt.Sprint(v)
		}
		out[i] = uint32(v)
	}
	return -1, ""
}

// columnSigned dispatches a signed partition column to its typed loop.
func columnSigned(id arrow.Type, b []byte, P uint64, out []uint32) (int, string) {
	switch id {
	case arrow.INT8:
		return colSigned(asI8(b), P, out)
	case arrow.INT16:
		return colSigned(asI16(b), P, out)
	case arrow.INT32:
		return colSigned(asI32(b), P, out)
	default:
		return colSigned(asI64(b), P, out)
	}
}

// columnUnsigned dispatches an unsigned partition column to its typed loop.
func columnUnsigned(id arrow.Type, b []byte, P uint64, out []uint32) (int, string) {
	switch id {
	case arrow.UINT8:
		return colUnsigned(asU8(b), P, out)
	case arrow.UINT16:
		return colUnsigned(asU16(b), P, out)
	case arrow.UINT32:
		return colUnsigned(asU32(b), P, out)
	default:
		return colUnsigned(asU64(b), P, out)
	}
}
