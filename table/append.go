package table

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Appender accumulates row ranges of many records of one schema into growing
// column buffers: a receiver appends each incoming piece (a few rows of a
// just-decoded record, still hot in cache) to its output partition at once,
// instead of keeping the piece and gathering it later from cold memory
// (ConcatRanges). The result is the same as ConcatRanges of the same ranges.
//
// The buffers are Go memory, or, as far as Presize sized them, come from the
// function given to NewAppenderAlloc; they grow by amortised doubling (a
// quarter at a time once large). An Appender is not safe for concurrent use, but a Record it
// returned may be read by other goroutines while Appends go on.
type Appender struct {
	schema *arrow.Schema
	cols   []appendCol
	rows   int64
	// capRows is a number of rows that every fixed-width value buffer and
	// every offset buffer has room for, as Presize last sized them (growth
	// only adds room): Room's answer without a look at each column.
	capRows int64
	// shared is set when a Record covers a partial last byte of the
	// bitmaps: the next Append moves the bitmaps to new backing arrays
	// before it writes the rest of that byte.
	shared bool
}

// appendCol is one column's buffers; only those of its class are used.
type appendCol struct {
	alloc  Alloc // nil: make
	ct     colType
	valid  []byte // validity bitmap, nil until the first range with nulls
	nulls  int64
	values []byte // fixed-width values, or the value bits of a bool column
	offs32 []int32
	offs64 []int64
	data   []byte
}

// NewAppender returns an appender for records of schema; ErrUnsupportedType
// for a column type typeOf does not know.
func NewAppender(schema *arrow.Schema) (*Appender, error) {
	return NewAppenderAlloc(schema, nil)
}

// Alloc returns n zeroed bytes, aligned for any Arrow type (8 bytes), with
// a capacity of at least n.
type Alloc func(n int) []byte

// NewAppenderAlloc is NewAppender whose presized column buffers (Presize)
// come from alloc (nil: Go memory), for example memory outside the Go heap
// (offheap.Arena): the caller keeps that memory valid while the Appender
// or any Record it returned is in use. Growth past a presize is Go memory,
// which the collector reclaims as buffers move: an arena that never frees
// would keep every outgrown buffer.
func NewAppenderAlloc(schema *arrow.Schema, alloc Alloc) (*Appender, error) {
	if err := checkSupported(schema); err != nil {
		return nil, err
	}
	a := &Appender{schema: schema, cols: make([]appendCol, schema.NumFields())}
	for i, f := range schema.Fields() {
		a.cols[i].alloc = alloc
		a.cols[i].ct, _ = typeOf(f.Type)
		a.cols[i].offs32 = []int32{0}
		a.cols[i].offs64 = []int64{0}
	}
	return a, nil
}

// Presize makes room for rows rows in all, so that appending them moves no
// buffer: fixed-width values and offsets exactly, the values of string and
// binary columns as many bytes per row as rows [off, off+n) of cols hold (a
// sample of what will come). It only ever adds capacity.
func (a *Appender) Presize(rows int64, cols []ColumnView, off, n int64) {
	defer a.countRoom()
	for i := range a.cols {
		c := &a.cols[i]
		switch c.ct.class {
		case classBool:
			c.values = withCap(c.alloc, c.values, int(bitutil.BytesForBits(rows)))
		case classVar32:
			c.offs32 = withCap(c.alloc, c.offs32, int(rows)+1)
			c.data = withCap(c.alloc, c.data, int(perRow(int64(cols[i].Offs32[off+n]-cols[i].Offs32[off]), n, rows)))
		case classVar64:
			c.offs64 = withCap(c.alloc, c.offs64, int(rows)+1)
			c.data = withCap(c.alloc, c.data, int(perRow(cols[i].Offs64[off+n]-cols[i].Offs64[off], n, rows)))
		default:
			c.values = withCap(c.alloc, c.values, int(rows)*c.ct.width)
		}
	}
}

// perRow scales bytes of a sample of n rows to rows rows.
func perRow(bytes, n, rows int64) int64 {
	if n <= 0 {
		return 0
	}
	return min(bytes*rows/n, math.MaxInt32)
}

// withCap returns s with room for at least n elements.
func withCap[T any](alloc Alloc, s []T, n int) []T {
	if cap(s) >= n {
		return s
	}
	t := makeSlice[T](alloc, len(s), n)
	copy(t, s)
	return t
}

// makeSlice is make([]T, n, c), from alloc unless it is nil.
func makeSlice[T any](alloc Alloc, n, c int) []T {
	if alloc == nil || c == 0 {
		return make([]T, n, c)
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	b := alloc(c * size)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), c)[:n]
}

// Empty returns a new, empty Appender of the same schema whose presized
// buffers come from alloc (nil: Go memory), as NewAppenderAlloc's.
func (a *Appender) Empty(alloc Alloc) *Appender {
	b := &Appender{schema: a.schema, cols: make([]appendCol, len(a.cols))}
	for i := range b.cols {
		b.cols[i] = appendCol{alloc: alloc, ct: a.cols[i].ct, offs32: []int32{0}, offs64: []int64{0}}
	}
	return b
}

// Room reports whether n more rows fit the capacity of every fixed-width
// value buffer and every offset buffer (as Presize sized them), so that
// appending them moves none of those. Bitmaps, and the values of string and
// binary columns (whose bytes per row Presize only guesses), may still grow.
func (a *Appender) Room(n int64) bool {
	rows := a.rows + n
	if rows <= a.capRows {
		return true
	}
	for i := range a.cols {
		c := &a.cols[i]
		var have, need int64
		switch c.ct.class {
		case classBool:
			continue
		case classVar32:
			have, need = int64(cap(c.offs32)), rows+1
		case classVar64:
			have, need = int64(cap(c.offs64)), rows+1
		default:
			have, need = int64(cap(c.values)), rows*int64(c.ct.width)
		}
		if have < need {
			return false
		}
	}
	return true
}

// countRoom sets capRows from the buffers' capacities.
func (a *Appender) countRoom() {
	room := int64(math.MaxInt64)
	for i := range a.cols {
		c := &a.cols[i]
		switch c.ct.class {
		case classBool:
		case classVar32:
			room = min(room, int64(cap(c.offs32))-1)
		case classVar64:
			room = min(room, int64(cap(c.offs64))-1)
		default:
			room = min(room, int64(cap(c.values)/max(c.ct.width, 1)))
		}
	}
	a.capRows = room
}

// Rows is the number of rows appended so far.
func (a *Appender) Rows() int64 { return a.rows }

// UsedBytes is the bytes of the rows appended so far (the length of its
// buffers, not their capacity).
func (a *Appender) UsedBytes() int64 {
	var n int
	for i := range a.cols {
		c := &a.cols[i]
		n += len(c.valid) + len(c.values) + len(c.data)
		switch c.ct.class {
		case classVar32:
			n += 4 * len(c.offs32)
		case classVar64:
			n += 8 * len(c.offs64)
		}
	}
	return int64(n)
}

// Bytes is the memory the appender holds (the capacity of its buffers).
func (a *Appender) Bytes() int64 {
	var n int
	for i := range a.cols {
		c := &a.cols[i]
		n += cap(c.valid) + cap(c.values) + 4*cap(c.offs32) + 8*cap(c.offs64) + cap(c.data)
	}
	return int64(n)
}

// Fits reports whether appending rows [off, off+rows) of cols keeps the
// values of every string or binary column addressable by its 32-bit offsets
// (at most math.MaxInt32 bytes). Call it before Append when an output may
// exceed 2 GiB; large_string and large_binary columns always fit.
func (a *Appender) Fits(cols []ColumnView, off, rows int64) bool {
	if rows <= 0 {
		return true
	}
	for i := range a.cols {
		if a.cols[i].ct.class != classVar32 {
			continue
		}
		offs := cols[i].Offs32
		if int64(len(a.cols[i].data))+int64(offs[off+rows]-offs[off]) > math.MaxInt32 {
			return false
		}
	}
	return true
}

// Append appends rows [off, off+rows) of the record whose column views are
// cols (ViewOf(rec)); cols must have the schema's layout (the caller
// guarantees it: records from the shuffle's codec). It never fails: buffers
// grow (amortised doubling). An empty range is a no-op. Appending values a
// string or binary column's 32-bit offsets cannot address is a caller bug
// and panics: call Fits first when the data may exceed 2 GiB. Append copies
// the rows: cols need not outlive the call.
func (a *Appender) Append(cols []ColumnView, off, rows int64) {
	if rows <= 0 {
		return
	}
	if !a.Fits(cols, off, rows) {
		panic(fmt.Sprintf("table: Appender.Append: rows [%d, %d) overflow a column's 32-bit offsets (call Fits first)", off, off+rows))
	}
	if a.shared {
		a.unshare()
	}
	for i := range a.cols {
		a.cols[i].append(&cols[i], a.rows, off, rows)
	}
	a.rows += rows
}

// unshare moves the bitmaps to new backing arrays, leaving the partial last
// byte that a Record covers to that Record alone.
func (a *Appender) unshare() {
	for i := range a.cols {
		c := &a.cols[i]
		c.valid = cloneCap(c.valid)
		if c.ct.class == classBool {
			c.values = cloneCap(c.values)
		}
	}
	a.shared = false
}

// Record returns the rows appended so far as a record of the schema that
// shares the appender's buffers without copying. The record stays valid and
// unchanged while later Appends happen (they write only past what it covers,
// or into new backing arrays), so a reader may hold it, even on another
// goroutine, while appends go on. The caller releases it.
func (a *Appender) Record() arrow.Record {
	cols := make([]arrow.Array, len(a.cols))
	defer releaseArrays(cols)
	for i, f := range a.schema.Fields() {
		cols[i] = a.cols[i].array(f.Type, a.rows)
	}
	a.shared = a.rows%8 != 0
	return array.NewRecord(a.schema, cols, a.rows)
}

// append copies rows [off, off+rows) of v to the column, whose first at rows
// are filled.
func (c *appendCol) append(v *ColumnView, at, off, rows int64) {
	c.appendValidity(v, at, off, rows)
	switch c.ct.class {
	case classBool:
		c.values = growBits(c.values, at+rows)
		bitutil.CopyBitmap(v.Bits, v.BitOff+int(off), int(rows), c.values, int(at))
	case classVar32:
		c.offs32, c.data = appendVar(c.offs32, c.data, v.Offs32, v.Data, off, rows)
	case classVar64:
		c.offs64, c.data = appendVar(c.offs64, c.data, v.Offs64, v.Data, off, rows)
	default:
		w := int64(c.ct.width)
		c.values = appendSlice(c.values, v.Fixed[off*w:(off+rows)*w])
	}
}

// appendValidity copies the range's validity bits, materialising the bitmap
// (every earlier row valid) when the first range with nulls arrives.
func (c *appendCol) appendValidity(v *ColumnView, at, off, rows int64) {
	if v.Valid == nil && c.valid == nil {
		return
	}
	fresh := c.valid == nil
	c.valid = growBits(c.valid, at+rows)
	if fresh {
		bitutil.SetBitsTo(c.valid, 0, at, true)
	}
	if v.Valid == nil {
		bitutil.SetBitsTo(c.valid, at, rows, true)
		return
	}
	src := v.ValidOff + int(off)
	bitutil.CopyBitmap(v.Valid, src, int(rows), c.valid, int(at))
	c.nulls += rows - int64(bitutil.CountSetBits(v.Valid, src, int(rows)))
}

// array wraps the column's first n rows as an array, without copying.
func (c *appendCol) array(dt arrow.DataType, n int64) arrow.Array {
	bufs := []*memory.Buffer{wrapBits(c.valid, n), nil}
	switch c.ct.class {
	case classBool:
		bufs[1] = wrapBits(c.values, n)
	case classVar32:
		bufs[1] = wrapBytes(arrow.Int32Traits.CastToBytes(c.offs32[: n+1 : n+1]))
		bufs = append(bufs, wrapBytes(c.data))
	case classVar64:
		bufs[1] = wrapBytes(arrow.Int64Traits.CastToBytes(c.offs64[: n+1 : n+1]))
		bufs = append(bufs, wrapBytes(c.data))
	default:
		bufs[1] = wrapBytes(c.values)
	}
	data := array.NewData(dt, int(n), bufs, nil, int(c.nulls), 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// wrapBytes makes a buffer of b's bytes, capped at its length so that no reader
// of the buffer can reach bytes appended later.
func wrapBytes(b []byte) *memory.Buffer {
	return memory.NewBufferBytes(b[:len(b):len(b)])
}

// wrapBits wraps the bytes of the first n bits of bitmap b; nil for nil.
func wrapBits(b []byte, n int64) *memory.Buffer {
	if b == nil {
		return nil
	}
	return wrapBytes(b[:bitutil.BytesForBits(n)])
}

// appendVar appends rows [off, off+rows) of a variable-width column with
// offsets srcOffs into srcData to offs and data, rebasing the offsets.
func appendVar[O int32 | int64](offs []O, data []byte, srcOffs []O, srcData []byte, off, rows int64) ([]O, []byte) {
	src := srcOffs[off : off+rows+1]
	n := len(offs)
	offs = grow(offs, int(rows))
	base := O(len(data)) - src[0]
	for i, o := range src[1:] {
		offs[n+i] = o + base
	}
	return offs, appendSlice(data, srcData[src[0]:src[rows]])
}

// appendSlice appends src to s, growing s by doubling.
func appendSlice[T any](s, src []T) []T {
	n := len(s)
	s = grow(s, len(src))
	copy(s[n:], src)
	return s
}

// growBits extends bitmap b to hold bits bits.
func growBits(b []byte, bits int64) []byte {
	return grow(b, int(bitutil.BytesForBits(bits))-len(b))
}

// grow extends s by n elements, moving it to a new backing array when it is
// full: twice the capacity while small, a quarter more once large (as Go's
// append does), so that a partition a little over its presize does not hold
// twice its bytes. Elements past len(s) are never written before grow
// exposes them, so they are zero.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s[:len(s)+n]
	}
	next := 2 * cap(s)
	if cap(s) >= growSlowAfter {
		next = cap(s) + cap(s)/4
	}
	t := make([]T, len(s)+n, max(next, len(s)+n, 16))
	copy(t, s)
	return t
}

// growSlowAfter is the capacity (in elements) from which grow adds a
// quarter instead of doubling.
const growSlowAfter = 4096

// cloneCap copies b to a new backing array of the same capacity; nil stays
// nil.
func cloneCap(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, cap(b)), b...)
}
