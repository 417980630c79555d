package table

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// This file moves each column's rows into per-group buffers following a
// plan. It reads the input sequentially and writes to one cursor per
// (group, partition): a scatter, which stays cache-friendly for thousands of
// partitions where a gather of random rows would miss the cache on every
// read. The column types were checked by the caller.

// scatterRecord builds one record per non-empty group.
func scatterRecord(mem memory.Allocator, rec arrow.Record, pl *plan) []Group {
	ngroups := len(pl.rows)
	cols := make([][]arrow.Array, ngroups)
	for g := range cols {
		cols[g] = make([]arrow.Array, rec.NumCols())
	}
	for c, arr := range rec.Columns() {
		for g, a := range scatterArray(mem, arr, pl) {
			cols[g][c] = a
		}
	}
	groups := make([]Group, ngroups)
	for g := range groups {
		if pl.rows[g] == 0 {
			continue
		}
		groups[g] = Group{Rec: array.NewRecord(rec.Schema(), cols[g], int64(pl.rows[g])), Runs: pl.runs[g]}
		releaseArrays(cols[g])
	}
	return groups
}

// newBuffer returns a buffer of exactly size bytes from mem.
func newBuffer(mem memory.Allocator, size int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(size)
	return b
}

// dirtyAllocator is an allocator that can skip zeroing memory the caller
// writes whole (mempool.Pool, the splitter's).
type dirtyAllocator interface {
	memory.Allocator
	AllocateDirty(size int) []byte
}

// newFilled is newBuffer for a buffer whose every byte the caller writes:
// from a dirtyAllocator, its bytes are not zeroed first.
func newFilled(mem memory.Allocator, size int) *memory.Buffer {
	if d, ok := mem.(dirtyAllocator); ok {
		return memory.NewBufferWithAllocator(d.AllocateDirty(size), d)
	}
	return newBuffer(mem, size)
}

// groupBuffers allocates one buffer per non-empty group: of
// (rows+extra)*width bytes, or a zeroed bitmap of rows bits when width is 0.
func groupBuffers(mem memory.Allocator, pl *plan, width, extra int) []*memory.Buffer {
	out := make([]*memory.Buffer, len(pl.rows))
	for g, n := range pl.rows {
		if n == 0 {
			continue
		}
		size := (n + extra) * width
		if width == 0 {
			size = int(bitutil.BytesForBits(int64(n)))
		}
		out[g] = newFilled(mem, size) // every value (offset) is written
		if width == 0 {
			clear(out[g].Bytes()) // bits are set, never cleared
		}
	}
	return out
}

// bytesOf returns the byte slices of bufs (nil for nil buffers).
func bytesOf(bufs []*memory.Buffer) [][]byte {
	out := make([][]byte, len(bufs))
	for g, b := range bufs {
		if b != nil {
			out[g] = b.Bytes()
		}
	}
	return out
}

// castAll applies cast to every slice.
func castAll[T any](bs [][]byte, cast func([]byte) []T) [][]T {
	out := make([][]T, len(bs))
	for g, b := range bs {
		out[g] = cast(b)
	}
	return out
}

// scatterArray splits one column into one array per group (nil for empty
// groups).
func scatterArray(mem memory.Allocator, arr arrow.Array, pl *plan) []arrow.Array {
	ct, _ := typeOf(arr.DataType())
	validity, nulls := scatterValidity(mem, arr, pl)
	var values [][]*memory.Buffer // per group: the buffers after validity
	switch ct.class {
	case classBool:
		values = wrap(scatterBits(mem, boolBits, arr, pl))
	case classVar32:
		offs, data := var32(arr)
		values = scatterVar(mem, offs, data, pl, 4, asI32)
	case classVar64:
		offs, data := var64(arr)
		values = scatterVar(mem, offs, data, pl, 8, asI64)
	default:
		values = wrap(scatterFixed(mem, fixedBytes(arr, ct.width), ct.width, pl))
	}
	out := make([]arrow.Array, len(pl.rows))
	for g, n := range pl.rows {
		if n == 0 {
			continue
		}
		bufs := append([]*memory.Buffer{validity[g]}, values[g]...)
		data := array.NewData(arr.DataType(), n, bufs, nil, nulls[g], 0)
		out[g] = array.MakeFromData(data)
		data.Release()
		for _, b := range bufs {
			if b != nil {
				b.Release()
			}
		}
	}
	return out
}

// wrap turns one buffer per group into a one-element list per group.
func wrap(bufs []*memory.Buffer) [][]*memory.Buffer {
	out := make([][]*memory.Buffer, len(bufs))
	for g, b := range bufs {
		out[g] = []*memory.Buffer{b}
	}
	return out
}

// scatterValidity splits the validity bitmap; groups without nulls get a
// nil bitmap. It returns the bitmaps and null counts per group.
func scatterValidity(mem memory.Allocator, arr arrow.Array, pl *plan) ([]*memory.Buffer, []int) {
	nulls := make([]int, len(pl.rows))
	if arr.NullN() == 0 {
		return make([]*memory.Buffer, len(pl.rows)), nulls
	}
	bufs := scatterBits(mem, validity, arr, pl)
	for g, b := range bufs {
		if b == nil {
			continue
		}
		nulls[g] = pl.rows[g] - bitutil.CountSetBits(b.Bytes(), 0, pl.rows[g])
		if nulls[g] == 0 {
			b.Release()
			bufs[g] = nil
		}
	}
	return bufs, nulls
}

// scatterBits splits the bitmap bits(arr) returns into zeroed per-group
// bitmaps, setting the bits that are set in the input.
func scatterBits(mem memory.Allocator, bits func(arrow.Array) ([]byte, int), arr arrow.Array, pl *plan) []*memory.Buffer {
	bufs := groupBuffers(mem, pl, 0, 0)
	dsts := bytesOf(bufs)
	src, off := bits(arr)
	for i, p := range pl.pos {
		bit := off + i
		if src[bit>>3]>>(bit&7)&1 != 0 {
			dsts[pl.group(i)][p>>3] |= 1 << (p & 7)
		}
	}
	return bufs
}

// scatterFixed splits values of width bytes each.
func scatterFixed(mem memory.Allocator, src []byte, width int, pl *plan) []*memory.Buffer {
	bufs := groupBuffers(mem, pl, width, 0)
	dsts := bytesOf(bufs)
	switch width {
	case 1:
		scatterValues(src, dsts, pl)
	case 2:
		scatterValues(asU16(src), castAll(dsts, asU16), pl)
	case 4:
		scatterValues(asU32(src), castAll(dsts, asU32), pl)
	default:
		scatterValues(asU64(src), castAll(dsts, asU64), pl)
	}
	return bufs
}

// scatterValues sets dsts[group(i)][pos[i]] = src[i].
func scatterValues[T any](src []T, dsts [][]T, pl *plan) {
	pos := pl.pos[:len(src)]
	if len(dsts) == 1 {
		dst := dsts[0]
		for i, v := range src {
			dst[pos[i]] = v
		}
		return
	}
	pids, groupOf := pl.pids[:len(src)], pl.groupOf
	for i, v := range src {
		dsts[groupOf[pids[i]]][pos[i]] = v
	}
}

// scatterVar splits variable-width values. It sums each partition's bytes,
// lays the partitions' bytes out in each group in the plan's order, then
// moves every value in one pass over the input: its bytes to its
// partition's cursor and its end offset to its position. The cursors are one
// per partition (a few KiB), so the pass reads the input sequentially and
// writes to one place per (group, partition), as scatterValues does. It
// returns [offsets, data] per group.
func scatterVar[O offset](mem memory.Allocator, offs []O, data []byte, pl *plan, width int, cast func([]byte) []O) [][]*memory.Buffer {
	cur, lim, sizes := varCursors(offs, pl)
	obufs := groupBuffers(mem, pl, width, 1)
	dOffs := castAll(bytesOf(obufs), cast)
	dbufs := make([]*memory.Buffer, len(obufs))
	for g, o := range dOffs {
		if o != nil {
			o[0] = 0
			dbufs[g] = newFilled(mem, int(sizes[g])) // every byte is copied in
		}
	}
	dsts := bytesOf(dbufs)
	for i, p := range pl.pos {
		q := pl.slot(i)
		g := pl.groupOf[pl.pids[i]]
		c, o := cur[q], offs[i]
		end := c + offs[i+1] - o
		if end-c <= shortValue && c+shortValue <= lim[q] && int(o)+shortValue <= len(data) {
			// A whole word move instead of a call: the bytes past the
			// value land in its partition's room, before the values
			// that follow it there are moved.
			*(*[shortValue]byte)(dsts[g][c : c+shortValue]) = *(*[shortValue]byte)(data[o : o+shortValue])
		} else {
			copy(dsts[g][c:end], data[o:offs[i+1]])
		}
		dOffs[g][p+1] = end
		cur[q] = end
	}
	out := make([][]*memory.Buffer, len(obufs))
	for g := range out {
		out[g] = []*memory.Buffer{obufs[g], dbufs[g]}
	}
	return out
}

// shortValue is the size of the values scatterVar moves as one array
// instead of calling copy.
const shortValue = 16

// varCursors returns where each partition's bytes start and end in its
// group's data (partitions in the order of pl.runs; indexed by pl.slot:
// by run in a sparse plan, so a record of few rows over many partitions
// does not allocate two words per partition) and each group's data size.
func varCursors[O offset](offs []O, pl *plan) (cur, lim, sizes []O) {
	n := pl.slots()
	cur, lim = make([]O, n), make([]O, n)
	for i := range offs[:len(offs)-1] {
		cur[pl.slot(i)] += offs[i+1] - offs[i]
	}
	sizes = make([]O, len(pl.rows))
	k := 0
	for g, runs := range pl.runs {
		for _, r := range runs {
			q := int(r.Partition)
			if pl.run != nil {
				q = k
			}
			k++
			n := cur[q]
			cur[q] = sizes[g]
			sizes[g] += n
			lim[q] = sizes[g]
		}
	}
	return cur, lim, sizes
}
