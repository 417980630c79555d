package table

import (
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// alignBody returns body, or a copy of it when it does not start on an
// 8-byte boundary (Arrow reads values through typed slices).
func alignBody(body []byte) []byte {
	if len(body) == 0 || uintptr(unsafe.Pointer(&body[0]))%8 == 0 {
		return body
	}
	return append(make([]byte, 0, len(body)), body...)
}

// buildRecord builds a record of the Codec's schema whose buffers are
// slices of body, after checking every length, offset and null count. With
// owner set (body is owner's bytes), each buffer is a slice of owner that
// holds a reference to it; without, the buffers are plain wraps of body,
// which the garbage collector keeps alive.
func (c *Codec) buildRecord(bm batchMeta, body []byte, owner *memory.Buffer) (rec arrow.Record, err error) {
	defer func() {
		if r := recover(); r != nil {
			rec, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	n := c.schema.NumFields()
	if len(bm.nodes) != n || bm.rows < 0 {
		return nil, fmt.Errorf("%w: %d columns of %d rows, want %d columns", ErrCorrupt, len(bm.nodes), bm.rows, n)
	}
	cols := make([]arrow.Array, n)
	defer releaseArrays(cols)
	next := 0
	for i := range n {
		f := c.schema.Field(i)
		nb := bufferCount(f.Type)
		if next+nb > len(bm.buffers) {
			return nil, fmt.Errorf("%w: column %q: %d buffers in message, need more", ErrCorrupt, f.Name, len(bm.buffers))
		}
		data, err := buildData(f, bm.rows, bm.nodes[i], bm.buffers[next:next+nb], body, owner)
		if err != nil {
			return nil, err
		}
		next += nb
		cols[i] = array.MakeFromData(data)
		data.Release()
	}
	if next != len(bm.buffers) {
		return nil, fmt.Errorf("%w: %d buffers in message, schema uses %d", ErrCorrupt, len(bm.buffers), next)
	}
	return array.NewRecord(c.schema, cols, bm.rows), nil
}

// bufferCount is the number of IPC buffers of a supported type: validity
// and values, plus data for variable-width types.
func bufferCount(dt arrow.DataType) int {
	if ct, _ := typeOf(dt); ct.class == classVar32 || ct.class == classVar64 {
		return 3
	}
	return 2
}

// buildData checks one column's node and buffers and wraps the buffers
// (slices of owner, when set; see buildRecord).
func buildData(f arrow.Field, rows int64, node [2]int64, spans [][2]int64, body []byte, owner *memory.Buffer) (*array.Data, error) {
	length, nulls := node[0], node[1]
	if length != rows || nulls < 0 || nulls > length {
		return nil, fmt.Errorf("%w: column %q: %d rows and %d nulls in a batch of %d rows", ErrCorrupt, f.Name, length, nulls, rows)
	}
	bufs := make([]*memory.Buffer, len(spans))
	for j, sp := range spans {
		off, n := sp[0], sp[1]
		if off < 0 || n < 0 || off%8 != 0 || off > int64(len(body))-n {
			releaseBuffers(bufs)
			return nil, fmt.Errorf("%w: column %q: buffer %d at [%d, +%d) outside a body of %d bytes or misaligned", ErrCorrupt, f.Name, j, off, n, len(body))
		}
		if j == 0 && nulls == 0 || n == 0 {
			continue // no validity bitmap needed; empty buffers stay nil
		}
		bufs[j] = wrapSpan(body, owner, off, n)
	}
	data := array.NewData(f.Type, int(length), bufs, nil, int(nulls), 0)
	releaseBuffers(bufs) // data holds its own references
	if err := validateData(data); err != nil {
		data.Release()
		return nil, fmt.Errorf("%w: column %q: %v", ErrCorrupt, f.Name, err)
	}
	return data, nil
}

// wrapSpan is bytes [off, off+n) of body as a buffer: a slice of owner that
// holds a reference to it, or a plain wrap when owner is nil.
func wrapSpan(body []byte, owner *memory.Buffer, off, n int64) *memory.Buffer {
	if owner == nil {
		return memory.NewBufferBytes(body[off : off+n])
	}
	return memory.SliceBuffer(owner, int(off), int(n))
}

// releaseBuffers releases every non-nil buffer of bufs.
func releaseBuffers(bufs []*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}
