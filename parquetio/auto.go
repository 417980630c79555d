package parquetio

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/parquet/compress"
)

// autoSampleBytes is about the most value bytes of a column that Auto
// snappy-encodes to choose its codec: one of snappy's 64 KiB blocks, which
// it compresses independently of the others.
const autoSampleBytes = 64 << 10

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
		case rec == nil || s.pays(valueSample(rec.Column(i), autoSampleBytes)...):
			codecs[f.Name] = Snappy
		default:
			codecs[f.Name] = Uncompressed
		}
	}
	return codecs
}

// sampler snappy-encodes samples into one reused buffer.
type sampler struct {
	dst []byte
}

// pays reports whether snappy shrinks the parts of a sample together to at
// most 7/8 of their size. An empty sample pays: Snappy is the default.
func (s *sampler) pays(parts ...[]byte) bool {
	snappy, err := compress.GetCodec(compress.Codecs.Snappy)
	if err != nil {
		return true
	}
	raw, enc := 0, 0
	for _, p := range parts {
		s.dst = snappy.Encode(s.dst[:cap(s.dst)], p)
		raw, enc = raw+len(p), enc+len(s.dst)
	}
	return enc*8 <= raw*7 || raw == 0
}

// valueSample returns about the first limit bytes of the values of a, in
// parts: the data bytes of the first rows and their offsets for strings
// and binaries, the values buffer (bits for booleans) otherwise. It is nil
// for an empty array or a type without a values buffer.
func valueSample(a arrow.Array, limit int) [][]byte {
	if a.Len() == 0 {
		return nil
	}
	switch v := a.(type) {
	case interface {
		ValueBytes() []byte
		ValueOffsets() []int32
	}:
		return varSample(v.ValueBytes(), v.ValueOffsets(), arrow.Int32Traits.CastToBytes, limit)
	case interface {
		ValueBytes() []byte
		ValueOffsets() []int64
	}:
		return varSample(v.ValueBytes(), v.ValueOffsets(), arrow.Int64Traits.CastToBytes, limit)
	}
	return [][]byte{fixedSample(a, limit)}
}

// varSample returns the data bytes and the offsets (as bytes, by toBytes)
// of the first rows of a variable-width array whose data and offsets come
// to about limit bytes. data starts at offsets[0].
func varSample[O int32 | int64](data []byte, offsets []O, toBytes func([]O) []byte, limit int) [][]byte {
	rows := len(offsets) - 1
	offBytes := toBytes(offsets)
	if total := len(data) + len(offBytes); total > limit {
		rows = max(1, int(int64(rows)*int64(limit)/int64(total)))
	}
	offsets = offsets[:rows+1]
	return [][]byte{data[:offsets[rows]-offsets[0]], toBytes(offsets)}
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
