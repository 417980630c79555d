package parquetio

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// autoSampleBytes is about the most value bytes of a column that Auto
// snappy-encodes to choose its codec. Small, since columns that pay are then
// compressed whole again: 16 KiB of an output partition of 16K rows (128 KiB
// of int64) adds 1/8 to its snappy time.
const autoSampleBytes = 16 << 10

// colPlan is how one column is written: its codec, whether its values are
// delta-encoded (instead of plain: DELTA_BINARY_PACKED integers,
// DELTA_LENGTH_BYTE_ARRAY strings and binaries; see deltaEncoding), and
// whether dictionary encoding is off for it (besides
// WriteConfig.NoDictionary).
type colPlan struct {
	codec  Compression
	delta  bool
	noDict bool
}

// planColumns returns how each column of schema is written, by name: with
// comp for every column unless comp is Auto. Under Auto, from a sample of
// each column of rec (nil: every column gets Snappy):
//   - a column whose sample's values are nearly all distinct (7/8 of
//     autoSampleValues or more) gets no dictionary: each value would cost a
//     hash lookup only to be written plain in the end (a chunk's dictionary
//     falls back to plain past 1 MiB), or to cost more than plain;
//   - an int32 column, or an int64 column that cannot hold nulls, gets
//     DELTA_BINARY_PACKED, uncompressed, and no dictionary, if that encodes
//     the sample in at most 7/8 of its plain size and no more than snappy
//     does, and (for a column that would keep its dictionary) in at most 9/8
//     of what the dictionary would take, estimated for the whole column
//     (deltaBeatsDict): keys, ids and counters of small range or order
//     encode to a few bits each, faster than snappy shrinks them or a
//     dictionary looks them up;
//   - a string or binary column that gets no dictionary (none for the file,
//     or none for it as above) is DELTA_LENGTH_BYTE_ARRAY: the values'
//     lengths delta-encoded (a few bits each, against PLAIN's 4 bytes),
//     then the values one after another, written and read a page at a time
//     instead of a value at a time;
//   - every other column gets Snappy if it pays on the sample (see
//     sampler.pays), else Uncompressed; a DELTA_LENGTH_BYTE_ARRAY column's
//     sample is its values without their lengths.
func planColumns(schema *arrow.Schema, comp Compression, noDict bool, rec arrow.Record) map[string]colPlan {
	plans := make(map[string]colPlan, schema.NumFields())
	s := samplers.Get().(*sampler)
	defer samplers.Put(s)
	for i, f := range schema.Fields() {
		switch {
		case comp != Auto:
			plans[f.Name] = colPlan{codec: comp}
		case rec == nil:
			plans[f.Name] = colPlan{codec: Snappy}
		default:
			plans[f.Name] = s.plan(rec.Column(i), noDict, f.Nullable)
		}
	}
	return plans
}

// plan chooses how Auto writes column a (see planColumns).
func (s *sampler) plan(a arrow.Array, noDict, nullable bool) colPlan {
	var dc distinctCount // counted only for a dictionary to decide on
	if !noDict {
		dc = s.countDistinct(a, autoSampleValues)
	}
	p := colPlan{noDict: !noDict && dc.mostly()}
	lengths := byteArray(a.DataType().ID()) && (noDict || p.noDict) // DELTA_LENGTH_BYTE_ARRAY
	sample := s.sample(a, autoSampleBytes, !lengths)
	snappy, ok := s.snappyLen(sample)
	delta, isInt := deltaSize(a, sample, nullable)
	switch {
	case !ok:
		p.codec = Snappy // empty sample: the default
	case isInt && deltaPays(delta, len(sample), snappy) &&
		(noDict || p.noDict || deltaBeatsDict(a, delta, len(sample), dc)):
		p.delta, p.codec = true, Uncompressed
	case snappy*8 <= len(sample)*7:
		p.codec = Snappy
	default:
		p.codec = Uncompressed
	}
	p.delta = p.delta || lengths
	return p
}

// deltaSize returns the estimated DELTA_BINARY_PACKED size of sample, the
// plain values of a, if a is an int32 column, or an int64 column that
// cannot hold nulls; false for others. Arrow v15's decoder of
// DELTA_BINARY_PACKED int64 values with nulls (DecodeSpaced, which runs on
// a copy of the decoder; int32's does not) loses its place when a read ends
// inside a page, and fails the rest of the read (TestDeltaNeverNullable),
// so a file with such a column could not be read back here in batches
// smaller than its pages without SafeBatchRows.
func deltaSize(a arrow.Array, sample []byte, nullable bool) (int, bool) {
	switch a.DataType().ID() {
	case arrow.INT64:
		if nullable {
			return 0, false
		}
		return deltaLen(arrow.Int64Traits.CastFromBytes(sample[:len(sample)/8*8])), true
	case arrow.INT32:
		return deltaLen(arrow.Int32Traits.CastFromBytes(sample[:len(sample)/4*4])), true
	}
	return 0, false
}

// deltaPays reports whether a sample of plain bytes that delta-encodes to
// delta bytes shrinks to at most 7/8 of its size, and to no more than
// snappy bytes.
func deltaPays(delta, plain, snappy int) bool {
	return delta*8 <= plain*7 && delta <= snappy
}

// deltaLen estimates the DELTA_BINARY_PACKED size of vs: per block of 128
// values, a header (a zigzag varint of the least delta, taken as 10 bytes,
// and 4 bit widths), then each miniblock of 32 deltas at the bit width of
// its largest delta over the least.
func deltaLen[T int32 | int64](vs []T) int {
	const block, mini = 128, 32
	n := 10 // the page header: block size, miniblocks, count, first value
	for b := 1; b < len(vs); b += block {
		end := min(b+block, len(vs))
		least := int64(vs[b]) - int64(vs[b-1])
		for i := b + 1; i < end; i++ {
			least = min(least, int64(vs[i])-int64(vs[i-1]))
		}
		n += 10 + 4
		for m := b; m < end; m += mini {
			var widest uint64
			for i := m; i < min(m+mini, end); i++ {
				widest = max(widest, uint64(int64(vs[i])-int64(vs[i-1])-least))
			}
			n += bits.Len64(widest) * mini / 8
		}
	}
	return n
}

// mostlyDistinct reports whether at least 7/8 of the first (up to) limit
// values of a are distinct (nulls left out). Only fixed-width columns of up
// to 8 bytes and strings and binaries are counted; others are not.
func mostlyDistinct(a arrow.Array, limit int) bool {
	return countDistinct(a, limit).mostly()
}

// distinctCount is what counting the distinct values among the first values
// of a column found.
type distinctCount struct {
	seen, distinct int
	// halfSeen and halfDistinct are seen and distinct when half the limit
	// had been seen (zero if the values ended before).
	halfSeen, halfDistinct int
}

func (c distinctCount) mostly() bool { return c.seen > 0 && c.distinct*8 >= c.seen*7 }

// add counts one more value, new or not, of a count up to limit.
func (c *distinctCount) add(distinct, limit int) {
	c.seen, c.distinct = c.seen+1, distinct
	if c.seen == limit/2 {
		c.halfSeen, c.halfDistinct = c.seen, distinct
	}
}

// estimate extrapolates the distinct values among n values of the column
// (n at least those counted) from the rate at which new values still
// appeared in the second half of the count: about none for a column of a
// few values in any order, about 1 in k for sorted keys each repeated k
// times, whose distinct values grow with the rows.
func (c distinctCount) estimate(n int) int {
	rest := c.seen - c.halfSeen
	if n <= c.seen || c.halfSeen == 0 || rest <= 0 {
		return c.distinct
	}
	return min(n, c.distinct+(c.distinct-c.halfDistinct)*(n-c.seen)/rest)
}

// countDistinct counts the distinct values among the first (up to) limit
// values of a (nulls left out): fixed-width columns of up to 8 bytes,
// strings and binaries; for other columns it counts none. Strings and
// binaries are counted by a 64-bit hash of their bytes, so two that collide
// count once: with limit in the thousands, about never.
func (s *sampler) countDistinct(a arrow.Array, limit int) distinctCount {
	var c distinctCount
	set := &s.set
	switch v := a.(type) {
	case varWidth:
		set.reset(min(limit, v.Len()))
		data, base := v.ValueBytes(), v.ValueOffset64(0)
		for i := 0; i < v.Len() && c.seen < limit; i++ {
			if v.IsNull(i) {
				continue
			}
			off := v.ValueOffset64(i) - base
			set.add(maphash.Bytes(set.seed, data[off:off+int64(v.ValueLen(i))]))
			c.add(set.n, limit)
		}
	default:
		fw, ok := a.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth() < 8 || fw.BitWidth() > 64 || a.Len() == 0 {
			return c
		}
		w := fw.BitWidth() / 8
		vals := fixedSample(a, limit*w)
		set.reset(len(vals) / w)
		var word [8]byte
		for i := 0; i+w <= len(vals); i += w {
			word = [8]byte{}
			copy(word[:], vals[i:i+w])
			set.add(binary.LittleEndian.Uint64(word[:]))
			c.add(set.n, limit)
		}
	}
	return c
}

// countDistinct is sampler.countDistinct on a sampler of its own.
func countDistinct(a arrow.Array, limit int) distinctCount {
	var s sampler
	return s.countDistinct(a, limit)
}

// distinctSet is a set of 64-bit words, open-addressed, reused from
// column to column and file to file: Auto counts a few thousand values of
// every column of every file a job writes (a thousand files for a
// thousand partitions), and a Go map made for each count cost more than
// the rest of choosing the codecs.
type distinctSet struct {
	seed maphash.Seed
	// slots holds the words; used[i] == gen marks slot i as holding one
	// in the current count, so reset clears nothing but bumps gen.
	slots []uint64
	used  []uint32
	gen   uint32
	mask  uint64
	n     int // distinct words added since reset
}

// reset empties the set, with room for at least n words at a load of at
// most one half.
func (d *distinctSet) reset(n int) {
	if d.seed == (maphash.Seed{}) {
		d.seed = maphash.MakeSeed()
	}
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size > len(d.slots) {
		d.slots, d.used, d.gen = make([]uint64, size), make([]uint32, size), 0
	}
	d.gen++
	if d.gen == 0 { // wrapped: old marks could read as current
		clear(d.used)
		d.gen = 1
	}
	d.mask, d.n = uint64(size-1), 0
}

// add puts w in the set (a no-op if it is there). The set must have room:
// at most the n words of reset.
func (d *distinctSet) add(w uint64) {
	for i := (w * 0x9E3779B97F4A7C15) >> 32 & d.mask; ; i = (i + 1) & d.mask {
		switch {
		case d.used[i] != d.gen:
			d.used[i], d.slots[i] = d.gen, w
			d.n++
			return
		case d.slots[i] == w:
			return
		}
	}
}

// deltaBeatsDict reports whether DELTA_BINARY_PACKED would hold the values
// of integer column a in at most 9/8 of what a dictionary would, both
// estimated for the whole column from its sample (delta: the sample's
// estimated encoded bytes, deltaBytes of len(sample) plain bytes) and its
// distinct count: the dictionary's values, plain, and an index of as many
// bits as its size needs per value. The 1/8 of slack goes to the delta
// encoding because it costs far less to write: Arrow v15's dictionary
// encoder for integers boxes every value in an interface to look it up.
func deltaBeatsDict(a arrow.Array, deltaBytes, sampleBytes int, dc distinctCount) bool {
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	if !ok || sampleBytes == 0 || dc.seen == 0 {
		return false
	}
	w := fw.BitWidth() / 8
	n := a.Len() - a.NullN()
	delta := int64(deltaBytes) * int64(n) / int64(max(1, sampleBytes/w))
	d := dc.estimate(n)
	dict := int64(d)*int64(w) + int64(n)*int64(bits.Len(uint(max(d-1, 1))))/8
	return delta*8 <= dict*9
}

// autoSampleValues is how many of a column's first values Auto looks at to
// count distinct values.
const autoSampleValues = 2048

// sampler builds samples, snappy-encodes them and counts their distinct
// values, in reused buffers.
type sampler struct {
	plain, dst []byte
	set        distinctSet
}

// samplers keeps samplers, with their buffers, from one file's plan to the
// next.
var samplers = sync.Pool{New: func() any { return new(sampler) }}

// snappyLen returns the snappy-encoded size of sample; false for an empty
// sample (or no codec).
func (s *sampler) snappyLen(sample []byte) (int, bool) {
	snappy, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil || len(sample) == 0 {
		return 0, false
	}
	s.dst = snappy.Encode(s.dst[:cap(s.dst)], sample)
	return len(s.dst), true
}

// varWidth is a string or binary array, large or not.
type varWidth interface {
	arrow.Array
	ValueBytes() []byte
	ValueOffset64(i int) int64
	ValueLen(i int) int
}

// sample returns about the first limit bytes of the values of a as a
// Parquet page holds them without dictionary: the values buffer of a
// fixed-width array (bits for booleans), and for strings and binaries each
// value after its 4-byte length if withLengths (PLAIN), else the values
// alone (DELTA_LENGTH_BYTE_ARRAY's, whose lengths take a few bits each);
// nulls left out. It is nil for a type without a values buffer. The result
// is valid until the next call.
func (s *sampler) sample(a arrow.Array, limit int, withLengths bool) []byte {
	if v, ok := a.(varWidth); ok {
		s.plain = plainSample(s.plain[:0], v, limit, withLengths)
		return s.plain
	}
	return fixedSample(a, limit)
}

// plainSample appends to dst the values of the first rows of v, each after
// its 4-byte length if withLengths, until dst holds at least limit bytes
// or the rows end.
func plainSample(dst []byte, v varWidth, limit int, withLengths bool) []byte {
	if v.Len() == 0 {
		return dst
	}
	data, base := v.ValueBytes(), v.ValueOffset64(0)
	for i := 0; i < v.Len() && len(dst) < limit; i++ {
		if v.IsNull(i) {
			continue
		}
		off, n := v.ValueOffset64(i)-base, v.ValueLen(i)
		if withLengths {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		}
		dst = append(dst, data[off:off+int64(n)]...)
	}
	return dst
}

// fixedSample returns up to limit bytes of the values buffer of a
// fixed-width array, from its first row; nil for other arrays.
func fixedSample(a arrow.Array, limit int) []byte {
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	bufs := a.Data().Buffers()
	if !ok || len(bufs) < 2 || bufs[1] == nil {
		return nil
	}
	b, bits, off := bufs[1].Bytes(), fw.BitWidth(), a.Data().Offset()
	lo, hi := off*bits/8, ((off+a.Len())*bits+7)/8
	return b[lo:min(hi, lo+limit, len(b))]
}
