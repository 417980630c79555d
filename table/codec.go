package table

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Compression names an Arrow IPC body compression.
type Compression string

// The compressions a Codec can write. Any Codec reads all of them.
const (
	NoCompression Compression = ""
	LZ4           Compression = "lz4"
	Zstd          Compression = "zstd"
)

// CodecConfig configures a Codec. The zero value is the default.
type CodecConfig struct {
	// Compression of the record batch bodies written by AppendRecord.
	Compression Compression `json:"compression,omitempty"`
	// MaxDecodedBytes bounds the memory one Decode may allocate for a
	// compressed message (0 means 1 GiB). Uncompressed messages are bounded
	// by their own size.
	MaxDecodedBytes int64 `json:"max_decoded_bytes,omitempty"`
}

// defaultMaxDecoded is MaxDecodedBytes when unset.
const defaultMaxDecoded = 1 << 30

// DefaultCodecConfig returns the default configuration: no compression, at
// most 1 GiB decompressed per message.
func DefaultCodecConfig() CodecConfig {
	return CodecConfig{MaxDecodedBytes: defaultMaxDecoded}
}

// Validate checks the configuration.
func (c CodecConfig) Validate() error {
	switch {
	case c.Compression != NoCompression && c.Compression != LZ4 && c.Compression != Zstd:
		return fmt.Errorf("%w: codec compression %q (want \"\", %q or %q)", ErrBadInput, c.Compression, LZ4, Zstd)
	case c.MaxDecodedBytes < 0:
		return fmt.Errorf("%w: codec max decoded bytes %d < 0", ErrBadInput, c.MaxDecodedBytes)
	}
	return nil
}

// Codec encodes and decodes the record batches of one shuffle schema as Arrow
// IPC stream-format messages. The schema travels once (SchemaBytes); each
// shard is one record batch message (AppendRecord). A stream made of
// SchemaBytes, any number of AppendRecord outputs and the 8-byte
// end-of-stream marker (0xFFFFFFFF 0x00000000) is a valid Arrow IPC stream.
// A Codec is safe for concurrent use.
type Codec struct {
	schema      *arrow.Schema
	mem         memory.Allocator
	cfg         CodecConfig
	schemaBytes []byte
	schemaMeta  *memory.Buffer // flatbuffer of the schema message
	gate        schemaGate
	encoders    sync.Pool // *encoder
}

// NewCodec returns a Codec with DefaultCodecConfig for schema, allocating
// encoding scratch and decoded buffers from mem (memory.DefaultAllocator
// when nil). Every field must have a supported type (ErrUnsupportedType
// otherwise).
func NewCodec(schema *arrow.Schema, mem memory.Allocator) (*Codec, error) {
	return NewCodecWithConfig(schema, mem, DefaultCodecConfig())
}

// NewCodecWithConfig is NewCodec with a configuration.
func NewCodecWithConfig(schema *arrow.Schema, mem memory.Allocator, cfg CodecConfig) (*Codec, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkSupported(schema); err != nil {
		return nil, err
	}
	if cfg.MaxDecodedBytes == 0 {
		cfg.MaxDecodedBytes = defaultMaxDecoded
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	sb, err := encodeSchema(schema)
	if err != nil {
		return nil, err
	}
	meta, _, err := splitMessage(sb)
	if err != nil {
		return nil, fmt.Errorf("table: codec schema message: %w", err)
	}
	return &Codec{schema: schema, mem: mem, cfg: cfg, schemaBytes: sb,
		schemaMeta: memory.NewBufferBytes(meta), gate: schemaGate{want: schema}}, nil
}

// Schema returns the Codec's schema.
func (c *Codec) Schema() *arrow.Schema { return c.schema }

// Config returns the Codec's configuration with defaults filled in.
func (c *Codec) Config() CodecConfig { return c.cfg }

// SchemaBytes returns the Arrow IPC stream-format schema message for the
// Codec's schema (continuation marker, length, flatbuffer, padding). The
// caller must not modify the returned slice.
func (c *Codec) SchemaBytes() []byte { return c.schemaBytes }

// SchemaFromBytes parses a schema message produced by SchemaBytes (exactly
// one message, nothing after it). Garbage gives an error wrapping
// ErrCorrupt, a schema with unsupported or nested types ErrUnsupportedType;
// it never panics and never allocates by an unchecked length.
func SchemaFromBytes(b []byte) (*arrow.Schema, error) {
	return decodeSchema(b)
}

// AppendRecord appends to dst the IPC stream-format bytes of one record batch
// message for rec (no schema message, no end-of-stream marker) and returns
// the extended slice. rec must have the Codec's columns (see CheckSchema;
// ErrSchemaMismatch otherwise). Sliced records are encoded with only their
// visible rows. rec is not retained.
func (c *Codec) AppendRecord(dst []byte, rec arrow.Record) ([]byte, error) {
	if rec == nil {
		return dst, fmt.Errorf("%w: nil record", ErrBadInput)
	}
	if err := c.gate.check(rec.Schema()); err != nil {
		return dst, err
	}
	return c.appendRecord(dst, rec)
}

// RecordParts encodes rec as AppendRecord does, but returns the message in
// parts instead of one buffer: the framed metadata, then the body's buffers
// and padding by reference (rec's own buffers, or new ones where Arrow's
// writer makes them: compression, slices). Joined, the parts are
// AppendRecord's bytes. rec's buffers must be Go memory that nothing
// changes while the parts are in use (the garbage collector keeps them
// alive after rec is released); the padding parts are shared and must not
// be written to.
func (c *Codec) RecordParts(rec arrow.Record) ([][]byte, error) {
	if rec == nil {
		return nil, fmt.Errorf("%w: nil record", ErrBadInput)
	}
	if err := c.gate.check(rec.Schema()); err != nil {
		return nil, err
	}
	return c.recordParts(rec)
}

// Decode parses one record batch message produced by AppendRecord into a
// record of the Codec's schema, which the caller must Release.
//
// Zero-copy: the record's buffers are slices of b (unless b's body is not
// 8-byte aligned, or the message is compressed: then they are new memory).
// b must therefore stay unchanged, and not be reused, while the record or
// any slice of it is alive; copy b first if that is not possible.
//
// Bytes that are not exactly one valid record batch message for this
// schema give an error wrapping ErrCorrupt: Decode checks the metadata,
// every buffer's bounds, offsets and null counts before building arrays,
// never panics, and bounds what it allocates for compressed messages (see
// CodecConfig.MaxDecodedBytes).
func (c *Codec) Decode(b []byte) (arrow.Record, error) {
	return c.decode(b)
}

// DecodeMessage is Decode for a message already split into its flatbuffer
// metadata and its body, as an Arrow Flight FlightData carries them
// (DataHeader, DataBody). The same zero-copy rule and checks apply.
func (c *Codec) DecodeMessage(meta, body []byte) (arrow.Record, error) {
	return c.decodeParts(meta, body)
}

// DecodeMessageBuffer is DecodeMessage for a body held by a reference-counted
// buffer, such as one whose memory goes back to a pool when it is released:
// the record's buffers are slices of body that hold their own references to
// it, so body's memory is freed only when the record (and every array or
// slice taken from it) has been released. The caller keeps its own
// reference to body and releases it as usual. A compressed or misaligned
// body is decoded into new buffers and the record holds no reference to it.
func (c *Codec) DecodeMessageBuffer(meta []byte, body *memory.Buffer) (arrow.Record, error) {
	return c.decodeOwned(meta, body)
}

// SchemaFromMessage is SchemaFromBytes for a schema message already split
// into metadata and body (a FlightData's DataHeader and DataBody).
func SchemaFromMessage(meta, body []byte) (*arrow.Schema, error) {
	return schemaFromParts(meta, body)
}

// Slice returns rows [off, off+rows) of rec as a new record sharing rec's
// buffers (rec.NewSlice). The result holds its own reference: the caller must
// Release it, independently of rec. Bounds are not checked beyond what
// NewSlice does (it panics when they are out of range).
func Slice(rec arrow.Record, off, rows int64) arrow.Record {
	return rec.NewSlice(off, off+rows)
}

// Concat concatenates records with the columns of the first (see
// CheckSchema), in order, into a new record allocated from mem, which the
// caller must Release. Records with other columns give ErrSchemaMismatch; an
// empty list gives ErrBadInput.
func Concat(mem memory.Allocator, recs []arrow.Record) (arrow.Record, error) {
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: no record to concatenate", ErrBadInput)
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	schema := recs[0].Schema()
	for i, r := range recs {
		if err := CheckSchema(schema, r.Schema()); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
	}
	return concatColumns(mem, schema, recs)
}

// concatColumns concatenates column by column with array.Concatenate.
func concatColumns(mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer releaseArrays(cols)
	parts := make([]arrow.Array, len(recs))
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		col, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("%w: column %q: %v", ErrBadInput, schema.Field(i).Name, err)
		}
		cols[i] = col
	}
	return array.NewRecord(schema, cols, rows), nil
}

// releaseArrays releases every non-nil array.
func releaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}
