package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// MessageParts splits one stream-format IPC message (as produced by
// AppendRecord or SchemaBytes) into its flatbuffer metadata (with padding)
// and its body, without copying: the results alias b. It checks the framing
// only, not the metadata. Useful to forward a message without decoding it
// (an Arrow Flight FlightData carries exactly these two parts).
func MessageParts(b []byte) (meta, body []byte, err error) {
	return splitMessage(b)
}

// splitMessage checks the continuation marker and metadata length of b.
func splitMessage(b []byte) (meta, body []byte, err error) {
	if len(b) < 8 {
		return nil, nil, fmt.Errorf("%w: %d bytes, shorter than a message prefix", ErrCorrupt, len(b))
	}
	if binary.LittleEndian.Uint32(b) != contToken {
		return nil, nil, fmt.Errorf("%w: no continuation marker", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint32(b[4:])
	if n == 0 || uint64(n) > uint64(len(b)-8) {
		return nil, nil, fmt.Errorf("%w: metadata length %d with %d bytes after the prefix", ErrCorrupt, n, len(b)-8)
	}
	return b[8 : 8+n], b[8+n:], nil
}

// newMessage parses metadata and pairs it with body, checking the message
// type and that the body has exactly the declared length.
func newMessage(meta, body []byte, want ipc.MessageType) (msg *ipc.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fmt.Errorf("%w: bad metadata: %v", ErrCorrupt, r)
		}
	}()
	mb, bb := memory.NewBufferBytes(meta), memory.NewBufferBytes(body)
	msg = ipc.NewMessage(mb, bb)
	mb.Release()
	bb.Release()
	if err := checkMessage(msg, len(body), want); err != nil {
		msg.Release()
		return nil, err
	}
	return msg, nil
}

// checkMessage checks the version, type and body length of msg.
func checkMessage(msg *ipc.Message, bodyLen int, want ipc.MessageType) error {
	switch {
	case msg.Version() < ipc.MetadataV4 || msg.Version() > ipc.MetadataV5:
		return fmt.Errorf("%w: metadata version %v", ErrCorrupt, msg.Version())
	case msg.Type() != want:
		return fmt.Errorf("%w: %v message, want %v", ErrCorrupt, msg.Type(), want)
	case msg.BodyLen() != int64(bodyLen):
		return fmt.Errorf("%w: body of %d bytes, metadata says %d", ErrCorrupt, bodyLen, msg.BodyLen())
	}
	return nil
}

// msgQueue is an ipc.MessageReader handing out queued messages, then EOF.
// It does not own the messages.
type msgQueue struct{ msgs []*ipc.Message }

// Message implements ipc.MessageReader.
func (q *msgQueue) Message() (*ipc.Message, error) {
	if len(q.msgs) == 0 {
		return nil, io.EOF
	}
	m := q.msgs[0]
	q.msgs = q.msgs[1:]
	return m, nil
}

// Retain implements ipc.MessageReader.
func (q *msgQueue) Retain() {}

// Release implements ipc.MessageReader.
func (q *msgQueue) Release() {}

// errTooLarge is what limitAlloc panics with; the reader's recover turns it
// into an error.
var errTooLarge = errors.New("allocation over the decode budget")

// limitAlloc passes allocations to mem until a budget of bytes is spent,
// then panics with errTooLarge. It bounds what garbage lengths in a message
// can make the Arrow reader allocate.
type limitAlloc struct {
	mem  memory.Allocator
	left atomic.Int64
}

// Allocate implements memory.Allocator.
func (a *limitAlloc) Allocate(size int) []byte {
	if a.left.Add(-int64(size)) < 0 {
		panic(errTooLarge)
	}
	return a.mem.Allocate(size)
}

// Reallocate implements memory.Allocator.
func (a *limitAlloc) Reallocate(size int, b []byte) []byte {
	if a.left.Add(int64(len(b)-size)) < 0 {
		panic(errTooLarge)
	}
	return a.mem.Reallocate(size, b)
}

// Free implements memory.Allocator.
func (a *limitAlloc) Free(b []byte) { a.mem.Free(b) }

// decode implements Codec.Decode: uncompressed batches are built straight
// over b; compressed ones go through Arrow's reader, which decompresses into
// new buffers.
func (c *Codec) decode(b []byte) (arrow.Record, error) {
	meta, body, err := splitMessage(b)
	if err != nil {
		return nil, err
	}
	return c.decodeParts(meta, body)
}

// decodeParts implements DecodeMessage.
func (c *Codec) decodeParts(meta, body []byte) (arrow.Record, error) {
	bm, err := parseBatch(meta, len(body))
	if err != nil {
		return nil, err
	}
	if bm.compressed {
		return c.decodeCompressed(meta, body)
	}
	return c.buildRecord(bm, alignBody(body), nil)
}

// decodeOwned implements DecodeMessageBuffer: decodeParts, with the
// record's buffers slices of owner when they are built over its bytes.
func (c *Codec) decodeOwned(meta []byte, owner *memory.Buffer) (arrow.Record, error) {
	body := owner.Bytes()
	bm, err := parseBatch(meta, len(body))
	if err != nil {
		return nil, err
	}
	if bm.compressed {
		return c.decodeCompressed(meta, body)
	}
	if aligned := alignBody(body); len(body) > 0 && &aligned[0] != &body[0] {
		return c.buildRecord(bm, aligned, nil) // a copy: owner is not referenced
	}
	return c.buildRecord(bm, body, owner)
}

// decodeCompressed decodes with Arrow's stream reader and validates the
// result.
func (c *Codec) decodeCompressed(meta, body []byte) (arrow.Record, error) {
	msg, err := newMessage(meta, body, ipc.MessageRecordBatch)
	if err != nil {
		return nil, err
	}
	defer msg.Release()
	rec, err := c.readRecord(msg, c.budget(len(body)))
	if err != nil {
		return nil, err
	}
	if err := validateRecord(rec); err != nil {
		rec.Release()
		return nil, err
	}
	return rec, nil
}

// budget is the most one Decode of a body of n bytes may allocate: the
// body's size plus rounding of every buffer, or MaxDecodedBytes if larger.
func (c *Codec) budget(n int) int64 {
	own := int64(n) + 64*(3*int64(c.schema.NumFields())+1)
	return max(own, c.cfg.MaxDecodedBytes)
}

// readRecord runs the Arrow stream reader over the schema message and msg.
func (c *Codec) readRecord(msg *ipc.Message, budget int64) (rec arrow.Record, err error) {
	defer func() {
		if r := recover(); r != nil {
			rec, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	schemaMsg := ipc.NewMessage(c.schemaMeta, memory.NewBufferBytes(nil))
	defer schemaMsg.Release()
	lim := &limitAlloc{mem: c.mem}
	lim.left.Store(budget)
	rd, err := ipc.NewReaderFromMessageReader(&msgQueue{msgs: []*ipc.Message{schemaMsg, msg}},
		ipc.WithAllocator(lim), ipc.WithSchema(c.schema))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer rd.Release()
	if !rd.Next() {
		return nil, fmt.Errorf("%w: no record: %v", ErrCorrupt, rd.Err())
	}
	rec = rd.Record()
	rec.Retain()
	return rec, nil
}

// decodeSchema implements SchemaFromBytes.
func decodeSchema(b []byte) (*arrow.Schema, error) {
	meta, body, err := splitMessage(b)
	if err != nil {
		return nil, err
	}
	return schemaFromParts(meta, body)
}

// schemaFromParts implements SchemaFromMessage.
func schemaFromParts(meta, body []byte) (schema *arrow.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			schema, err = nil, fmt.Errorf("%w: schema: %v", ErrCorrupt, r)
		}
	}()
	if err := checkSchemaFB(meta); err != nil {
		return nil, err
	}
	msg, err := newMessage(meta, body, ipc.MessageSchema)
	if err != nil {
		return nil, err
	}
	defer msg.Release()
	rd, err := ipc.NewReaderFromMessageReader(&msgQueue{msgs: []*ipc.Message{msg}})
	if err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrCorrupt, err)
	}
	defer rd.Release()
	return rd.Schema(), nil
}
