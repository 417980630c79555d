package dfops

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// picker says where each output row of a gather comes from: row a[r] of
// source 0 when a[r] >= 0, else row b[r] of source 1 when there is one and
// b[r] >= 0, else a null. (Arrow's Take kernel grows a string result one
// value at a time, which is quadratic; this gather sizes it first.)
type picker struct {
	srcs [2]arrow.Array // srcs[1] may be nil; both of one type
	a, b []int32
}

// at returns the source and row of output row r; src is -1 for a null.
func (p picker) at(r int) (src int, row int) {
	if i := p.a[r]; i >= 0 {
		return 0, int(i)
	}
	if p.srcs[1] != nil {
		if j := p.b[r]; j >= 0 {
			return 1, int(j)
		}
	}
	return -1, 0
}

// allValid reports whether every output row is a row of a source without
// nulls: then the output needs no validity bitmap.
func (p picker) allValid() bool {
	for _, s := range p.srcs {
		if s != nil && s.NullN() > 0 {
			return false
		}
	}
	for r, i := range p.a {
		if i < 0 && (p.srcs[1] == nil || p.b[r] < 0) {
			return false
		}
	}
	return true
}

// gather builds the array of len(p.a) rows that p describes, allocated from
// mem; the caller must Release it. Rows that are a run of one source's
// consecutive rows are that source's slice, sharing its buffers: the lead
// side of a join whose lead rows match one build row each (a merge on a
// key of the build side), or rows already in order.
func gather(mem memory.Allocator, p picker) (arrow.Array, error) {
	dt := p.srcs[0].DataType()
	if err := canGather(dt); err != nil {
		return nil, err
	}
	if lo, ok := p.run(); ok {
		return array.NewSlice(p.srcs[0], int64(lo), int64(lo+len(p.a))), nil
	}
	n := len(p.a)
	valid, nulls := gatherValidity(mem, p)
	if valid != nil {
		defer valid.Release()
	}
	var bufs []*memory.Buffer
	var err error
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY:
		bufs, err = gatherVar[int32](mem, p)
	case arrow.LARGE_STRING, arrow.LARGE_BINARY:
		bufs, err = gatherVar[int64](mem, p)
	case arrow.BOOL:
		bufs = []*memory.Buffer{gatherBits(mem, p)}
	default:
		bufs = []*memory.Buffer{gatherFixedWidth(mem, dt, p)}
	}
	if err != nil {
		return nil, err
	}
	for _, b := range bufs {
		defer b.Release()
	}
	data := array.NewData(dt, n, append([]*memory.Buffer{valid}, bufs...), nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// canGather reports an error for a type gather cannot build.
func canGather(dt arrow.DataType) error {
	switch dt.ID() {
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.BOOL:
		return nil
	}
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		switch fw.BitWidth() {
		case 8, 16, 32, 64:
			return nil
		}
	}
	return fmt.Errorf("%w: cannot gather %s", ErrUnsupportedType, dt)
}

// run returns lo when the rows p describes are rows lo, lo+1, ... of its
// one source, in order (and there is at least one).
func (p picker) run() (lo int, ok bool) {
	if p.srcs[1] != nil || len(p.a) == 0 || p.a[0] < 0 {
		return 0, false
	}
	first := p.a[0]
	for r, i := range p.a {
		if i != first+int32(r) {
			return 0, false
		}
	}
	return int(first), true
}

// gatherValidity returns the output's validity bitmap and null count; no
// bitmap (nil, 0) when every row is valid.
func gatherValidity(mem memory.Allocator, p picker) (*memory.Buffer, int) {
	if p.allValid() {
		return nil, 0
	}
	n := len(p.a)
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for r := range n {
		if s, i := p.at(r); s >= 0 && p.srcs[s].IsValid(i) {
			bitutil.SetBit(bits, r)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(size)
	return buf
}

// values returns the values buffer of a fixed-width array as []T, from the
// array's first row.
func values[T any](arr arrow.Array) []T {
	var zero T
	b := arr.Data().Buffers()[1]
	if b == nil || b.Len() == 0 {
		return nil
	}
	all := unsafe.Slice((*T)(unsafe.Pointer(&b.Bytes()[0])), b.Len()/int(unsafe.Sizeof(zero)))
	return all[arr.Data().Offset():]
}

// gatherFixedWidth gathers the values of a fixed-width type of 8, 16, 32
// or 64 bits (the widths canGather takes).
func gatherFixedWidth(mem memory.Allocator, dt arrow.DataType, p picker) *memory.Buffer {
	switch dt.(arrow.FixedWidthDataType).BitWidth() {
	case 8:
		return gatherWords[uint8](mem, p)
	case 16:
		return gatherWords[uint16](mem, p)
	case 32:
		return gatherWords[uint32](mem, p)
	}
	return gatherWords[uint64](mem, p)
}

func gatherWords[T uint8 | uint16 | uint32 | uint64](mem memory.Allocator, p picker) *memory.Buffer {
	var zero T
	n := len(p.a)
	buf := newBuffer(mem, n*int(unsafe.Sizeof(zero)))
	out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), n)
	src := [2][]T{values[T](p.srcs[0])}
	if p.srcs[1] == nil { // one source (a sort, a join's side): no picking
		for r, i := range p.a {
			if i >= 0 {
				out[r] = src[0][i]
			} else {
				out[r] = 0
			}
		}
		return buf
	}
	src[1] = values[T](p.srcs[1])
	for r := range out {
		if s, i := p.at(r); s >= 0 {
			out[r] = src[s][i]
		} else {
			out[r] = 0
		}
	}
	return buf
}

// gatherBits gathers a bool array's value bits.
func gatherBits(mem memory.Allocator, p picker) *memory.Buffer {
	n := len(p.a)
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(n))))
	bits := buf.Bytes()
	clear(bits)
	for r := range n {
		if s, i := p.at(r); s >= 0 && p.srcs[s].(*array.Boolean).Value(i) {
			bitutil.SetBit(bits, r)
		}
	}
	return buf
}

// gatherVar gathers a string or binary array with offsets of type O: it
// sizes the data first, then copies each value once.
func gatherVar[O int32 | int64](mem memory.Allocator, p picker) ([]*memory.Buffer, error) {
	var offs [2][]O
	var data [2][]byte
	for s, src := range p.srcs {
		if src != nil {
			offs[s] = values[O](src)
			if b := src.Data().Buffers()[2]; b != nil {
				data[s] = b.Bytes()
			}
		}
	}
	n := len(p.a)
	obuf := newBuffer(mem, (n+1)*int(unsafe.Sizeof(O(0))))
	out := unsafe.Slice((*O)(unsafe.Pointer(unsafe.SliceData(obuf.Bytes()))), n+1)
	total := int64(0)
	if p.srcs[1] == nil { // one source: no picking
		o := offs[0]
		for r, i := range p.a {
			out[r] = O(total)
			if i >= 0 {
				total += int64(o[i+1] - o[i])
			}
		}
	} else {
		for r := range n {
			out[r] = O(total)
			if s, i := p.at(r); s >= 0 {
				total += int64(offs[s][i+1] - offs[s][i])
			}
		}
	}
	if unsafe.Sizeof(O(0)) == 4 && total > math.MaxInt32 {
		obuf.Release()
		return nil, fmt.Errorf("%w: %d bytes of strings in one batch (at most 2 GiB)", ErrTooLarge, total)
	}
	out[n] = O(total)
	dbuf := newBuffer(mem, int(total))
	dst := dbuf.Bytes()
	if p.srcs[1] == nil {
		o, d := offs[0], data[0]
		for r, i := range p.a {
			if i >= 0 {
				copy(dst[out[r]:out[r+1]], d[o[i]:o[i+1]])
			}
		}
		return []*memory.Buffer{obuf, dbuf}, nil
	}
	for r := range n {
		if s, i := p.at(r); s >= 0 {
			copy(dst[out[r]:out[r+1]], data[s][offs[s][i]:offs[s][i+1]])
		}
	}
	return []*memory.Buffer{obuf, dbuf}, nil
}
