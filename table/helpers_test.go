package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// allTypes lists one instance of every supported type.
var allTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
	arrow.FixedWidthTypes.Boolean,
	arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary, arrow.BinaryTypes.LargeBinary,
	arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64,
	&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"},
}

// allSchema has one column per supported type, named c<i>_<type>.
func allSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(allTypes))
	for i, dt := range allTypes {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d_%s", i, dt.ID()), Type: dt, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// checkedMem returns a checked allocator that fails t if anything leaks.
func checkedMem(t testing.TB) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// randomRecord builds a record of schema with n random rows; each value is
// null with probability nullFrac (when the schema allows any).
func randomRecord(mem memory.Allocator, schema *arrow.Schema, n int, rng *rand.Rand, nullFrac float64) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for c, f := range schema.Fields() {
		fb := b.Field(c)
		for range n {
			if rng.Float64() < nullFrac {
				fb.AppendNull()
				continue
			}
			appendRandom(fb, f.Type, rng)
		}
	}
	return b.NewRecord()
}

// randomFloat returns a float with a fair share of special values.
func randomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(20) {
	case 0:
		return math.NaN()
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return 0
	case 3:
		return math.Inf(1 - 2*rng.IntN(2))
	}
	return (rng.Float64() - 0.5) * 1000
}

// randomBytes returns a random byte string of 0..20 bytes.
func randomBytes(rng *rand.Rand) []byte {
	b := make([]byte, rng.IntN(21))
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return b
}

// appendRandom appends one random value of type dt to fb.
func appendRandom(fb array.Builder, dt arrow.DataType, rng *rand.Rand) {
	u := rng.Uint64()
	switch b := fb.(type) {
	case *array.Int8Builder:
		b.Append(int8(u))
	case *array.Int16Builder:
		b.Append(int16(u))
	case *array.Int32Builder:
		b.Append(int32(u))
	case *array.Int64Builder:
		b.Append(int64(u))
	case *array.Uint8Builder:
		b.Append(uint8(u))
	case *array.Uint16Builder:
		b.Append(uint16(u))
	case *array.Uint32Builder:
		b.Append(uint32(u))
	case *array.Uint64Builder:
		b.Append(u)
	case *array.Float16Builder:
		b.Append(float16.New(float32(randomFloat(rng))))
	case *array.Float32Builder:
		b.Append(float32(randomFloat(rng)))
	case *array.Float64Builder:
		b.Append(randomFloat(rng))
	case *array.BooleanBuilder:
		b.Append(u&1 == 1)
	case *array.StringBuilder:
		b.Append(string(randomBytes(rng)))
	case *array.LargeStringBuilder:
		b.Append(string(randomBytes(rng)))
	case *array.BinaryBuilder:
		b.Append(randomBytes(rng))
	case *array.Date32Builder:
		b.Append(arrow.Date32(int32(u)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(int64(u)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(int64(u)))
	default:
		panic(fmt.Sprintf("no random values for %s", dt))
	}
}

// cell renders row i of arr for comparisons (NaN equals NaN, -0 and 0
// differ).
func cell(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "<null>"
	}
	switch a := arr.(type) {
	case *array.Float64:
		return fmt.Sprintf("%x", math.Float64bits(a.Value(i)))
	case *array.Float32:
		return fmt.Sprintf("%x", math.Float32bits(a.Value(i)))
	}
	return arr.ValueStr(i)
}

// sameRows fails t unless row ia of a equals row ib of b in every column.
func sameRows(t testing.TB, a arrow.Record, ia int, b arrow.Record, ib int) {
	t.Helper()
	for c := range int(a.NumCols()) {
		if x, y := cell(a.Column(c), ia), cell(b.Column(c), ib); x != y {
			t.Fatalf("column %s: row %d is %s, want row %d = %s", a.ColumnName(c), ib, y, ia, x)
		}
	}
}

// sameRecords fails t unless a and b hold the same rows.
func sameRecords(t testing.TB, a, b arrow.Record) {
	t.Helper()
	if a.NumRows() != b.NumRows() || a.NumCols() != b.NumCols() {
		t.Fatalf("record of %dx%d, want %dx%d", b.NumRows(), b.NumCols(), a.NumRows(), a.NumCols())
	}
	for i := range int(a.NumRows()) {
		sameRows(t, a, i, b, i)
	}
}

// refCanon is a row-at-a-time reference of the canonical byte form, written
// from the package documentation with Arrow's scalar accessors.
func refCanon(arr arrow.Array, i int) []byte {
	le := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	fl := func(f float64) []byte {
		if f == 0 {
			f = 0
		}
		if math.IsNaN(f) {
			return le(0x7FF8000000000000)
		}
		return le(math.Float64bits(f))
	}
	switch a := arr.(type) {
	case *array.Int8:
		return le(uint64(int64(a.Value(i))))
	case *array.Int16:
		return le(uint64(int64(a.Value(i))))
	case *array.Int32:
		return le(uint64(int64(a.Value(i))))
	case *array.Int64:
		return le(uint64(a.Value(i)))
	case *array.Uint8:
		return le(uint64(a.Value(i)))
	case *array.Uint16:
		return le(uint64(a.Value(i)))
	case *array.Uint32:
		return le(uint64(a.Value(i)))
	case *array.Uint64:
		return le(a.Value(i))
	case *array.Float16:
		return fl(float64(a.Value(i).Float32()))
	case *array.Float32:
		return fl(float64(a.Value(i)))
	case *array.Float64:
		return fl(a.Value(i))
	case *array.Boolean:
		if a.Value(i) {
			return le(1)
		}
		return le(0)
	case *array.String:
		return []byte(a.Value(i))
	case *array.LargeString:
		return []byte(a.Value(i))
	case *array.Binary:
		return a.Value(i)
	case *array.LargeBinary:
		return a.Value(i)
	case *array.Date32:
		return le(uint64(int64(a.Value(i))))
	case *array.Date64:
		return le(uint64(int64(a.Value(i))))
	case *array.Timestamp:
		return le(uint64(int64(a.Value(i))))
	}
	panic(fmt.Sprintf("no reference for %T", arr))
}

// refFmix is MurmurHash3's finaliser, as the documentation states it.
func refFmix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xFF51AFD7ED558CCD
	x ^= x >> 33
	x *= 0xC4CEB9FE1A85EC53
	x ^= x >> 33
	return x
}

// refHash is the documented byte-string hash, padding b up front.
func refHash(b []byte) uint64 {
	const s = 0x9E3779B97F4A7C15
	h := uint64(s) ^ uint64(len(b))
	if len(b) == 0 {
		return refFmix(h)
	}
	padded := append(append([]byte(nil), b...), make([]byte, (8-len(b)%8)%8)...)
	for i := 0; i < len(padded); i += 8 {
		h = refFmix(h ^ binary.LittleEndian.Uint64(padded[i:]))
	}
	return h
}

// refRowHash is the documented row hash of rec's columns cols at row i, and
// whether any key is null.
func refRowHash(rec arrow.Record, cols []int, i int) (uint64, bool) {
	var h uint64
	for k, c := range cols {
		col := rec.Column(c)
		if col.IsNull(i) {
			return 0, true
		}
		ch := refHash(refCanon(col, i))
		if k == 0 {
			h = ch
		} else {
			h = refFmix(h*0x9E3779B97F4A7C15 + ch)
		}
	}
	return h, false
}

// refPartition is the documented reduction of a row hash to [0, p).
func refPartition(h uint64, p int) uint32 {
	// floor(h*p / 2^64) computed with 32-bit halves to stay independent of
	// math/bits.
	hHi, hLo := h>>32, h&0xFFFFFFFF
	pp := uint64(p)
	lo := hLo * pp
	mid := hHi*pp + lo>>32
	return uint32(mid >> 32)
}
