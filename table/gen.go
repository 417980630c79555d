package table

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// GenConfig describes a synthetic table for demos, tests and benchmarks.
type GenConfig struct {
	// Rows is the total number of rows over all tasks.
	Rows int64
	// Seed makes the data reproducible: the same (Seed, task, tasks) gives the
	// same record.
	Seed uint64
	// KeyCardinality is the number of distinct keys (keys are uniform in
	// [0, KeyCardinality)); 0 or less means keys are uniform non-negative
	// 63-bit values.
	KeyCardinality int64
	// PayloadBytes is the length of each row's name string.
	PayloadBytes int
}

// GenSchema returns the schema of generated records: key int64, id int64
// (globally unique row id: firstID + i, see GenTaskRows), value float64,
// name string (PayloadBytes ASCII characters). No column has nulls.
func GenSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "value", Type: arrow.PrimitiveTypes.Float64},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
}

// GenRowBytes is the Arrow buffer bytes of one generated row: 8 (key) + 8
// (id) + 8 (value) + 4 (string offset) + PayloadBytes.
func GenRowBytes(cfg GenConfig) int64 { return 28 + int64(max(cfg.PayloadBytes, 0)) }

// GenTaskRows returns the number of rows and the first row id of task: the
// cfg.Rows rows are split as evenly as possible over tasks, the first
// Rows%tasks tasks getting one extra row, so the ids of all tasks together
// are exactly 0..Rows-1. A task outside [0, tasks) has no rows.
func GenTaskRows(cfg GenConfig, task, tasks int) (rows, firstID int64) {
	if tasks <= 0 || task < 0 || task >= tasks || cfg.Rows <= 0 {
		return 0, 0
	}
	base, extra := cfg.Rows/int64(tasks), cfg.Rows%int64(tasks)
	t := int64(task)
	return base + b2i(t < extra), t*base + min(t, extra)
}

// b2i converts a bool to 0 or 1.
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// GenTask returns the record of input task task out of tasks, allocated from
// mem (memory.DefaultAllocator when nil; the caller must Release it). It is
// deterministic in (cfg, task, tasks). A task outside [0, tasks) gives an
// empty record.
func GenTask(mem memory.Allocator, cfg GenConfig, task int, tasks int) arrow.Record {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	rows, first := GenTaskRows(cfg, task, tasks)
	n := int(rows)
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(task)))
	cols := []arrow.Array{
		genInt64(mem, n, func(int) int64 { return genKey(rng, cfg.KeyCardinality) }),
		genInt64(mem, n, func(i int) int64 { return first + int64(i) }),
		genFloat64(mem, n, rng),
		genNames(mem, n, max(cfg.PayloadBytes, 0), rng),
	}
	defer releaseArrays(cols)
	return array.NewRecord(GenSchema(), cols, rows)
}

// genKey draws one key.
func genKey(rng *rand.Rand, card int64) int64 {
	if card > 0 {
		return rng.Int64N(card)
	}
	return rng.Int64()
}

// genInt64 builds an int64 array of n values f(0..n-1).
func genInt64(mem memory.Allocator, n int, f func(int) int64) arrow.Array {
	buf := newBuffer(mem, n*8)
	defer buf.Release()
	vals := asI64(buf.Bytes())
	for i := range vals {
		vals[i] = f(i)
	}
	return fixedArray(arrow.PrimitiveTypes.Int64, n, buf)
}

// genFloat64 builds a float64 array of n uniform values in [0, 1).
func genFloat64(mem memory.Allocator, n int, rng *rand.Rand) arrow.Array {
	buf := newBuffer(mem, n*8)
	defer buf.Release()
	vals := asF64(buf.Bytes())
	for i := range vals {
		vals[i] = rng.Float64()
	}
	return fixedArray(arrow.PrimitiveTypes.Float64, n, buf)
}

// fixedArray wraps a values buffer (retained) as an array without nulls.
func fixedArray(dt arrow.DataType, n int, buf *memory.Buffer) arrow.Array {
	data := array.NewData(dt, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// nameAlphabet is the 32 characters generated names are made of.
const nameAlphabet = "abcdefghijklmnopqrstuvwxyz012345"

// fillNames fills data with characters of nameAlphabet, eight per 64 random
// bits. The bits come from an xorshift64 generator seeded from rng: names
// need no better randomness, and it costs no multiply.
func fillNames(data []byte, rng *rand.Rand) {
	x := rng.Uint64() | 1
	next := func() uint64 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return x
	}
	i := 0
	for ; i+8 <= len(data); i += 8 {
		binary.LittleEndian.PutUint64(data[i:], nameBytes(next()))
	}
	if i < len(data) {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], nameBytes(next()))
		copy(data[i:], last[:])
	}
}

// nameBytes maps the low five bits of each byte of r to nameAlphabet, in
// all eight bytes at once: v < 26 becomes 'a'+v, v >= 26 becomes '0'+v-26.
// No lane carries into the next (every lane stays below 0x80).
func nameBytes(r uint64) uint64 {
	const ones = 0x0101010101010101
	v := r & (0x1f * ones)
	high := ((v + (0x80-26)*ones) >> 7) & ones // 1 in the lanes where v >= 26
	return v + 'a'*ones - high*('a'-'0'+26)
}

// genNames builds a string array of n random names of width characters.
func genNames(mem memory.Allocator, n, width int, rng *rand.Rand) arrow.Array {
	ob, db := newBuffer(mem, (n+1)*4), newBuffer(mem, n*width)
	defer ob.Release()
	defer db.Release()
	offs, data := asI32(ob.Bytes()), db.Bytes()
	for i := range offs {
		offs[i] = int32(i * width)
	}
	fillNames(data, rng)
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, ob, db}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}
