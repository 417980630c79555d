package parquetio

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/parquet/compress"
)

// autoSampleBytes is about the most value bytes of a column that Auto
// snappy-encodes to choose its codec. Small, since columns that pay are then
// compressed whole again: 16 KiB of an output partition of 16K rows (128 KiB
// of int64) adds 1/8 to its snappy time.
const autoSampleBytes = 16 << 10

// chooseCodecs returns the compression of each column of schema, by name:
// comp for every column unless comp is Auto. Under Auto each column of rec
// gets Snappy if a sample of its values pays (see sampler.pays), else
// Uncompressed; with rec nil every column gets Snappy.
func chooseCodecs(schema *arrow.Schema, comp Compression, rec arrow.Record) map[string]Compression {
	codecs := make(map[string]Compression, schema.NumFields())
	var s sampler
	for i, f := range schema.Fields() {
		switch {
		case comp != Auto:
			codecs[f.Name] = comp
		case rec == nil || s.pays(s.sample(rec.Column(i), autoSampleBytes)):
			codecs[f.Name] = Snappy
		default:
			codecs[f.Name] = Uncompressed
		}
	}
	return codecs
}

// sampler builds samples and snappy-encodes them, in reused buffers.
type sampler struct {
	plain, dst []byte
}

// pays reports whether snappy shrinks sample to at most 7/8 of its size.
// An empty sample pays: Snappy is the default.
func (s *sampler) pays(sample []byte) bool {
	snappy, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil || len(sample) == 0 {
		return true
	}
	s.dst = snappy.Encode(s.dst[:cap(s.dst)], sample)
	return len(s.dst)*8 <= len(sample)*7
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
