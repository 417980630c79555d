package table

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// contToken is the IPC continuation marker that starts every message.
const contToken = 0xFFFFFFFF

// appendWriter is an io.Writer appending to a byte slice.
type appendWriter struct{ buf []byte }

// Write appends p.
func (w *appendWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// payloadSink is an ipc.PayloadWriter that frames payloads as stream-format
// messages into out, dropping the first skip payloads (the schema).
type payloadSink struct {
	skip  int
	out   appendWriter
	parts *partsWriter // set: gather the body by reference (RecordParts)
}

// partsWriter is an io.Writer that keeps references to what it is given.
type partsWriter struct{ parts [][]byte }

// Write implements io.Writer.
func (w *partsWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.parts = append(w.parts, p)
	}
	return len(p), nil
}

// Start implements ipc.PayloadWriter.
func (s *payloadSink) Start() error { return nil }

// Close implements ipc.PayloadWriter; it writes no end-of-stream marker.
func (s *payloadSink) Close() error { return nil }

// WritePayload implements ipc.PayloadWriter.
func (s *payloadSink) WritePayload(p ipc.Payload) error {
	if s.skip > 0 {
		s.skip--
		return nil
	}
	meta := p.Meta()
	defer meta.Release()
	if s.parts != nil {
		s.parts.parts = append(s.parts.parts, appendFrame(nil, meta.Bytes()))
		return p.SerializeBody(s.parts)
	}
	s.out.buf = appendFrame(s.out.buf, meta.Bytes())
	return p.SerializeBody(&s.out)
}

// appendFrame appends the continuation marker, the padded metadata length,
// the metadata and its padding to an 8-byte boundary (as the Arrow writer
// does).
func appendFrame(dst, meta []byte) []byte {
	padded := (len(meta) + 8 + 7) &^ 7
	dst = binary.LittleEndian.AppendUint32(dst, contToken)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(padded-8))
	dst = append(dst, meta...)
	for range padded - 8 - len(meta) {
		dst = append(dst, 0)
	}
	return dst
}

// encoder is a pooled stream writer whose schema payload has already been
// dropped; each Write emits one record batch message into sink.out.
type encoder struct {
	w    *ipc.Writer
	sink *payloadSink
}

// newEncoder returns an encoder for the Codec's schema and compression.
func (c *Codec) newEncoder() *encoder {
	sink := &payloadSink{skip: 1}
	opts := []ipc.Option{ipc.WithSchema(c.schema), ipc.WithAllocator(c.mem)}
	switch c.cfg.Compression {
	case LZ4:
		opts = append(opts, ipc.WithLZ4())
	case Zstd:
		opts = append(opts, ipc.WithZstd())
	}
	return &encoder{w: ipc.NewWriterWithPayloadWriter(sink, opts...), sink: sink}
}

// appendRecord encodes rec (already checked against the schema) onto dst.
func (c *Codec) appendRecord(dst []byte, rec arrow.Record) ([]byte, error) {
	e, _ := c.encoders.Get().(*encoder)
	if e == nil {
		e = c.newEncoder()
	}
	switch {
	case rec.NumRows() == 0:
		// Arrow v15's writer panics on zero-row slices of string columns:
		// encode fresh empty arrays instead.
		rec = emptyRecord(c.mem, c.schema)
		defer rec.Release()
	case !rec.Schema().Equal(c.schema):
		rec = array.NewRecord(c.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	n := len(dst)
	e.sink.out.buf = slices.Grow(dst, estimateSize(rec))
	err := e.w.Write(rec)
	dst, e.sink.out.buf = e.sink.out.buf, nil
	if err != nil {
		return dst[:n], fmt.Errorf("table: encode record of %d rows: %w", rec.NumRows(), err)
	}
	c.encoders.Put(e)
	return dst, nil
}

// recordParts implements RecordParts: appendRecord's encoder, its sink
// switched to gathering parts for the one record.
func (c *Codec) recordParts(rec arrow.Record) ([][]byte, error) {
	if rec.NumRows() == 0 {
		b, err := c.appendRecord(nil, rec)
		return [][]byte{b}, err
	}
	if !rec.Schema().Equal(c.schema) {
		rec = array.NewRecord(c.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	e, _ := c.encoders.Get().(*encoder)
	if e == nil {
		e = c.newEncoder()
	}
	pw := &partsWriter{}
	e.sink.parts = pw
	err := e.w.Write(rec)
	e.sink.parts = nil
	if err != nil {
		return nil, fmt.Errorf("table: encode record of %d rows: %w", rec.NumRows(), err)
	}
	c.encoders.Put(e)
	return pw.parts, nil
}

// estimateSize guesses the encoded size of rec from the rows it shows (a
// slice of a large record must not be charged its parent's buffers: the
// spill path encodes many small slices of one entry) plus room for
// metadata and padding.
func estimateSize(rec arrow.Record) int {
	rows := int(rec.NumRows())
	size := 512 + 64*int(rec.NumCols())
	for _, col := range rec.Columns() {
		size += rows/8 + 16 // validity bitmap
		ct, _ := typeOf(col.DataType())
		switch ct.class {
		case classBool:
			size += rows/8 + 8
		case classVar32:
			offs, _ := var32(col)
			size += 4*(rows+1) + int(offs[len(offs)-1]-offs[0]) + 16
		case classVar64:
			offs, _ := var64(col)
			size += 8*(rows+1) + int(offs[len(offs)-1]-offs[0]) + 16
		default:
			size += rows*ct.width + 8
		}
	}
	return size
}

// encodeSchema returns the stream-format schema message for schema.
func encodeSchema(schema *arrow.Schema) ([]byte, error) {
	sink := &payloadSink{}
	w := ipc.NewWriterWithPayloadWriter(sink, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("table: encode schema: %w", err)
	}
	return sink.out.buf, nil
}

// emptyRecord returns a record of schema with no rows and fresh buffers.
func emptyRecord(mem memory.Allocator, schema *arrow.Schema) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	return b.NewRecord()
}
