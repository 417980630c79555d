package parquetio

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/parquet/compress"
)

// autoSampleBytes is about the most value bytes of a column that Auto
// snappy-encodes to choose its codec. Small, since columns that pay are then
// compressed whole again: 16 KiB of an output partition of 16K rows (128 KiB
// of int64) adds 1/8 to its snappy time.
const autoSampleBytes = 16 << 10

// colPlan is how one column is written: its codec, whether its values are
// DELTA_BINARY_PACKED (instead of plain), and whether dictionary encoding
// is off for it (besides WriteConfig.NoDictionary).
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
//   - an int32 or int64 column without a dictionary gets DELTA_BINARY_PACKED,
//     uncompressed, if that encodes the sample in at most 7/8 of its plain
//     size and no more than snappy does: keys, ids and counters of small
//     range or order encode to a few bits each, faster than snappy shrinks
//     them;
//   - every other column gets Snappy if it pays on the sample (see
//     sampler.pays), else Uncompressed.
func planColumns(schema *arrow.Schema, comp Compression, noDict bool, rec arrow.Record) map[string]colPlan {
	plans := make(map[string]colPlan, schema.NumFields())
	var s sampler
	for i, f := range schema.Fields() {
		switch {
		case comp != Auto:
			plans[f.Name] = colPlan{codec: comp}
		case rec == nil:
			plans[f.Name] = colPlan{codec: Snappy}
		default:
			plans[f.Name] = s.plan(rec.Column(i), noDict)
		}
	}
	return plans
}

// plan chooses how Auto writes column a (see planColumns).
func (s *sampler) plan(a arrow.Array, noDict bool) colPlan {
	p := colPlan{noDict: !noDict && mostlyDistinct(a, autoSampleValues)}
	sample := s.sample(a, autoSampleBytes)
	snappy, ok := s.snappyLen(sample)
	switch {
	case !ok:
		p.codec = Snappy // empty sample: the default
	case (noDict || p.noDict) && deltaPays(a, sample, snappy):
		p.delta, p.codec = true, Uncompressed
	case snappy*8 <= len(sample)*7:
		p.codec = Snappy
	default:
		p.codec = Uncompressed
	}
	return p
}

// deltaPays reports whether a is an int32 or int64 column whose sample
// (its plain values) delta-encodes to at most 7/8 of its size and to no
// more than snappy bytes.
func deltaPays(a arrow.Array, sample []byte, snappy int) bool {
	var n int
	switch a.DataType().ID() {
	case arrow.INT64:
		n = deltaLen(arrow.Int64Traits.CastFromBytes(sample[:len(sample)/8*8]))
	case arrow.INT32:
		n = deltaLen(arrow.Int32Traits.CastFromBytes(sample[:len(sample)/4*4]))
	default:
		return false
	}
	return n*8 <= len(sample)*7 && n <= snappy
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
	var distinct, seen int
	switch v := a.(type) {
	case varWidth:
		set := make(map[string]struct{}, min(limit, v.Len()))
		data, base := v.ValueBytes(), v.ValueOffset64(0)
		for i := 0; i < v.Len() && seen < limit; i++ {
			if v.IsNull(i) {
				continue
			}
			off := v.ValueOffset64(i) - base
			set[string(data[off:off+int64(v.ValueLen(i))])] = struct{}{}
			seen++
		}
		distinct = len(set)
	default:
		fw, ok := a.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth() < 8 || fw.BitWidth() > 64 || a.Len() == 0 {
			return false
		}
		w := fw.BitWidth() / 8
		vals := fixedSample(a, limit*w)
		set := make(map[uint64]struct{}, len(vals)/w)
		var word [8]byte
		for i := 0; i+w <= len(vals); i += w {
			word = [8]byte{}
			copy(word[:], vals[i:i+w])
			set[binary.LittleEndian.Uint64(word[:])] = struct{}{}
			seen++
		}
		distinct = len(set)
	}
	return seen > 0 && distinct*8 >= seen*7
}

// autoSampleValues is how many of a column's first values Auto looks at to
// count distinct values.
const autoSampleValues = 2048

// sampler builds samples and snappy-encodes them, in reused buffers.
type sampler struct {
	plain, dst []byte
}

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
// value after its 4-byte length (nulls left out). It is nil for a type
// without a values buffer. The result is valid until the next call.
func (s *sampler) sample(a arrow.Array, limit int) []byte {
	if v, ok := a.(varWidth); ok {
		s.plain = plainSample(s.plain[:0], v, limit)
		return s.plain
	}
	return fixedSample(a, limit)
}

// plainSample appends to dst the length-prefixed values of the first rows
// of v, until dst holds at least limit bytes or the rows end.
func plainSample(dst []byte, v varWidth, limit int) []byte {
	if v.Len() == 0 {
		return dst
	}
	data, base := v.ValueBytes(), v.ValueOffset64(0)
	for i := 0; i < v.Len() && len(dst) < limit; i++ {
		if v.IsNull(i) {
			continue
		}
		off, n := v.ValueOffset64(i)-base, v.ValueLen(i)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
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
