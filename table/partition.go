package table

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Partitioner computes the output partition of every row of a record batch.
// It is immutable after NewPartitioner and safe for concurrent use.
type Partitioner struct {
	schema *arrow.Schema
	rule   Rule
	c      *compiled
	gate   schemaGate
}

// NewPartitioner validates rule against schema and partitions (see
// Rule.Validate) and returns a Partitioner for records of that schema.
func NewPartitioner(schema *arrow.Schema, rule Rule, partitions int) (*Partitioner, error) {
	c, err := compileRule(schema, rule, partitions)
	if err != nil {
		return nil, err
	}
	return &Partitioner{schema: schema, rule: rule, c: c, gate: schemaGate{want: schema}}, nil
}

// Partitions returns the number of output partitions P.
func (p *Partitioner) Partitions() int { return p.c.p }

// Rule returns the rule the Partitioner applies.
func (p *Partitioner) Rule() Rule { return p.rule }

// Schema returns the schema the Partitioner accepts.
func (p *Partitioner) Schema() *arrow.Schema { return p.schema }

// Partition writes the partition (in [0, P)) of each row of rec into out and
// returns it, resized to rec.NumRows(). out is reused when its capacity is
// large enough, otherwise a new slice is allocated. rec must have the
// Partitioner's columns (see CheckSchema; ErrSchemaMismatch otherwise).
// Sliced records are fine. For Column rules, a null or a value outside
// [0, P) is an error wrapping ErrBadPartition naming the row and value. The
// work is done column by column over the Arrow buffers, with no per-row
// allocation.
func (p *Partitioner) Partition(rec arrow.Record, out []uint32) ([]uint32, error) {
	if rec == nil {
		return out[:0], fmt.Errorf("%w: nil record", ErrBadInput)
	}
	if err := p.gate.check(rec.Schema()); err != nil {
		return out[:0], err
	}
	n := int(rec.NumRows())
	if cap(out) < n {
		out = make([]uint32, n)
	}
	out = out[:n]
	switch p.c.kind {
	case Hash:
		p.hashRows(rec, out)
	case Range:
		p.rangeRows(rec.Column(p.c.cols[0]), out)
	default:
		return out, p.columnRows(rec.Column(p.c.cols[0]), out)
	}
	return out, nil
}

// hashBlock is how many rows hashRows hashes at a time: the row hashes of a
// block stay in L1.
const hashBlock = 1024

// hashBufs holds hashRows' buffers of a block's row hashes. On the stack,
// its 8 KiB made the goroutine of every put grow and copy its stack, 2-5%
// of a node's CPU with 100,000 tasks of a few rows.
var hashBufs = sync.Pool{New: func() any { return new([hashBlock]uint64) }}

// hashRows applies a Hash rule: row hashes are built column by column, a
// block of rows at a time, then reduced to partitions; rows with a null key
// go to partition 0.
func (p *Partitioner) hashRows(rec arrow.Record, out []uint32) {
	buf := hashBufs.Get().(*[hashBlock]uint64)
	defer hashBufs.Put(buf)
	P := uint64(p.c.p)
	for lo := 0; lo < len(out); lo += hashBlock {
		acc := buf[:min(hashBlock, len(out)-lo)]
		for k, ci := range p.c.cols {
			hashColumn(rec.Column(ci), p.c.types[k], lo, acc, k > 0)
		}
		dst := out[lo : lo+len(acc)]
		for i, h := range acc {
			dst[i] = reduce(h, P)
		}
	}
	for _, ci := range p.c.cols {
		fillNulls(rec.Column(ci), out, 0)
	}
}

// fillNulls sets out[i] = pid for every null row i of arr.
func fillNulls(arr arrow.Array, out []uint32, pid uint32) {
	bitmap, off := validity(arr)
	if bitmap == nil {
		return
	}
	for i := range out {
		if !isValid(bitmap, off, i) {
			out[i] = pid
		}
	}
}

// hashColumn hashes the canonical form of rows [lo, lo+len(acc)) of arr
// into acc (or combines with acc when combine is set). Null rows get
// arbitrary hashes; the caller overrides their partition.
func hashColumn(arr arrow.Array, ct colType, lo int, acc []uint64, combine bool) {
	hi := lo + len(acc)
	switch ct.class {
	case classSigned, classUnsigned, classFloat:
		b := fixedBytes(arr, ct.width)[lo*ct.width : hi*ct.width]
		hashFixed(arr.DataType().ID(), b, acc, combine)
	case classBool:
		bits, off := boolBits(arr)
		for i := range acc {
			store(acc, i, hashWord(bitVal(bits, off+lo+i)), combine)
		}
	case classVar32:
		offs, data := var32(arr)
		hashVar(offs[lo:hi+1], data, acc, combine)
	case classVar64:
		offs, data := var64(arr)
		hashVar(offs[lo:hi+1], data, acc, combine)
	}
}

// bitVal returns bit i of b as 0 or 1.
func bitVal(b []byte, i int) uint64 {
	return uint64(b[i>>3]>>(i&7)) & 1
}

// hashFixed dispatches a fixed-width column to its typed hash loop.
func hashFixed(id arrow.Type, b []byte, acc []uint64, combine bool) {
	switch id {
	case arrow.INT8:
		hashSigned(asI8(b), acc, combine)
	case arrow.INT16:
		hashSigned(asI16(b), acc, combine)
	case arrow.INT32, arrow.DATE32:
		hashSigned(asI32(b), acc, combine)
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP:
		hashSigned(asI64(b), acc, combine)
	case arrow.UINT8:
		hashUnsigned(asU8(b), acc, combine)
	case arrow.UINT16:
		hashUnsigned(asU16(b), acc, combine)
	case arrow.UINT32:
		hashUnsigned(asU32(b), acc, combine)
	case arrow.UINT64:
		hashUnsigned(asU64(b), acc, combine)
	case arrow.FLOAT16:
		for i, v := range asF16(b) {
			store(acc, i, hashWord(canonFloat(float64(v.Float32()))), combine)
		}
	case arrow.FLOAT32:
		hashFloat(asF32(b), acc, combine)
	case arrow.FLOAT64:
		hashFloat(asF64(b), acc, combine)
	}
}
