package flightproto

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// FlightData's field numbers (Flight.proto).
const (
	fieldDescriptor  = 1
	fieldDataHeader  = 2
	fieldAppMetadata = 3
	fieldDataBody    = 1000
)

// codec is gRPC's proto codec with two changes for the large messages of a
// shuffle: marshalled messages go to a pool that does not zero buffers, and
// a FlightData is decoded into one buffer of its own whose bytes its
// DataHeader, AppMetadata and DataBody share (gRPC's codec would gather the
// message into a pooled buffer and protobuf would copy each field out of
// it again).
type codec struct {
	proto encoding.CodecV2
	pool  *bufferPool
}

func newCodec(pool *bufferPool) *codec {
	return &codec{proto: encoding.GetCodecV2("proto"), pool: pool}
}

// Name is "proto": the wire format is unchanged.
func (c *codec) Name() string { return "proto" }

// Marshal encodes v into one pooled buffer (small messages as gRPC does).
func (c *codec) Marshal(v any) (mem.BufferSlice, error) {
	if sd, ok := v.(*sharedData); ok {
		return c.marshalShared(sd)
	}
	m, ok := v.(proto.Message)
	if !ok {
		return c.proto.Marshal(v)
	}
	size := proto.Size(m)
	if mem.IsBelowBufferPoolingThreshold(size) {
		return c.proto.Marshal(v)
	}
	buf := c.pool.Get(size)
	if _, err := (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend((*buf)[:0], m); err != nil {
		c.pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, c.pool)}, nil
}

// sharedData is a FlightData (its descriptor, header and app metadata from
// fd) whose body is the concatenation of body (n bytes), which the codec
// hands to gRPC without copying (see NewSharingWriter). When keep is set,
// body's buffers are valid only while keep is reachable.
type sharedData struct {
	fd   *flight.FlightData
	body [][]byte
	n    int
	keep any
}

// marshalShared encodes the FlightData's fields before the body into one
// pooled buffer (the body last, as protobuf allows any field order) and
// appends the body's parts by reference.
func (c *codec) marshalShared(sd *sharedData) (mem.BufferSlice, error) {
	var desc []byte
	if sd.fd.FlightDescriptor != nil {
		var err error
		if desc, err = proto.Marshal(sd.fd.FlightDescriptor); err != nil {
			return nil, err
		}
	}
	size := 3*protowire.SizeTag(fieldDataBody) + protowire.SizeBytes(len(desc)) +
		protowire.SizeBytes(len(sd.fd.DataHeader)) + protowire.SizeBytes(len(sd.fd.AppMetadata)) +
		protowire.SizeTag(fieldDataBody) + protowire.SizeVarint(uint64(sd.n))
	buf := c.pool.Get(size)
	b := (*buf)[:0]
	if sd.fd.FlightDescriptor != nil {
		b = appendField(b, fieldDescriptor, desc)
	}
	if len(sd.fd.DataHeader) > 0 {
		b = appendField(b, fieldDataHeader, sd.fd.DataHeader)
	}
	if len(sd.fd.AppMetadata) > 0 {
		b = appendField(b, fieldAppMetadata, sd.fd.AppMetadata)
	}
	if sd.n > 0 {
		b = protowire.AppendTag(b, fieldDataBody, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(sd.n))
	}
	*buf = b
	out := mem.BufferSlice{mem.NewBuffer(buf, c.pool)}
	for _, part := range sd.body {
		out = append(out, bodyBuffer(part, sd.keep))
	}
	return out, nil
}

// bodyBuffer hands part to gRPC by reference. A part that needs keep
// reachable becomes a buffer whose pool holds keep until gRPC frees it (after
// writing it), and tells keep's releaser (WriteReleased) when; one too
// small for gRPC to track that way is copied.
func bodyBuffer(part []byte, keep any) mem.Buffer {
	switch {
	case keep == nil:
		return mem.SliceBuffer(part)
	case mem.IsBelowBufferPoolingThreshold(len(part)):
		return mem.SliceBuffer(bytes.Clone(part))
	}
	if r, ok := keep.(*releaser); ok {
		r.hold() // a part this large is tracked: gRPC puts it back once
	}
	return mem.NewBuffer(&part, keeper{keep})
}

// keeper is the gRPC buffer pool of buffers that are not pooled: it holds
// what their memory needs reachable until gRPC puts them back, and then
// drops a releaser's hold.
type keeper struct{ v any }

func (keeper) Get(n int) *[]byte {
	b := make([]byte, n)
	return &b
}

func (k keeper) Put(*[]byte) {
	if r, ok := k.v.(*releaser); ok {
		r.done()
	}
}

// appendField appends a bytes field.
func appendField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// Unmarshal decodes data into v; a FlightData keeps references into one
// copy of data that nothing else uses: a new buffer, or for a pooledData
// one from the codec's pool.
func (c *codec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *pooledData:
		return c.unmarshalPooled(data, m)
	case *flight.FlightData:
		n := data.Len()
		pad := bodyPad(data)
		b := make([]byte, pad+n)[pad:]
		data.CopyTo(b)
		return decodeFlightData(b, m)
	}
	return c.proto.Unmarshal(data, v)
}

// unmarshalPooled decodes data into d over a buffer from the pool, which d
// holds until d.release.
func (c *codec) unmarshalPooled(data mem.BufferSlice, d *pooledData) error {
	n := data.Len()
	pad := bodyPad(data)
	buf := c.pool.Get(pad + n)
	b := (*buf)[pad:]
	data.CopyTo(b)
	if err := decodeFlightData(b, &d.FlightData); err != nil {
		c.pool.Put(buf)
		return err
	}
	d.pool, d.buf = c.pool, buf
	return nil
}

// pooledData is a FlightData that the codec decodes into a buffer from its
// pool rather than a new one, for a reader that knows when the message's
// bytes are no longer used (Reader's pooled mode): release hands the
// buffer back. Through another codec (gRPC's proto codec, which the
// embedded FlightData satisfies) it is an ordinary FlightData and release
// does nothing.
type pooledData struct {
	flight.FlightData
	pool *bufferPool
	buf  *[]byte
}

// release hands d's buffer back to its pool; nothing may use d's byte
// fields afterwards. It is idempotent.
func (d *pooledData) release() {
	if d.buf != nil {
		d.pool.putReleased(d.buf)
		d.buf = nil
	}
}

// bodyPad is how far to shift a FlightData's copy so that its DataBody
// starts 8-byte aligned (Go's large allocations are), which lets a record
// be built over the body without copying it again (see Reader). It looks
// only at the first buffer of data: 0 when the body does not start there.
func bodyPad(data mem.BufferSlice) int {
	if len(data) == 0 {
		return 0
	}
	off := bodyOffset(data[0].ReadOnlyData())
	return (8 - off%8) % 8
}

// bodyOffset returns where the DataBody's bytes start in a FlightData
// whose encoding begins with b, or 0 if b ends before that.
func bodyOffset(b []byte) int {
	off := 0
	for off < len(b) {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return 0
		}
		off += n
		if num == fieldDataBody && typ == protowire.BytesType {
			_, m := protowire.ConsumeVarint(b[off:])
			if m < 0 {
				return 0
			}
			return off + m
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off:])
		if m < 0 {
			return 0
		}
		off += m
	}
	return 0
}

// decodeFlightData decodes a FlightData from b; its byte fields point into
// b. Unknown fields are skipped (protobuf would keep them; Flight has
// none).
func decodeFlightData(b []byte, fd *flight.FlightData) error {
	fd.Reset()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("flightproto: FlightData: %w", protowire.ParseError(n))
		}
		if !num.IsValid() {
			return fmt.Errorf("flightproto: FlightData: invalid field number %d", num)
		}
		b = b[n:]
		n, err := decodeField(b, num, typ, fd)
		if err != nil {
			return fmt.Errorf("flightproto: FlightData field %d: %w", num, err)
		}
		b = b[n:]
	}
	return nil
}

// decodeField decodes one field's value from b and returns its length.
func decodeField(b []byte, num protowire.Number, typ protowire.Type, fd *flight.FlightData) (int, error) {
	if typ != protowire.BytesType || num > fieldDataBody {
		return consumed(protowire.ConsumeFieldValue(num, typ, b))
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return consumed(n)
	}
	v = v[:len(v):len(v)] // an append to one field must not overwrite the next
	switch num {
	case fieldDescriptor:
		fd.FlightDescriptor = new(flight.FlightDescriptor)
		if err := proto.Unmarshal(v, fd.FlightDescriptor); err != nil {
			return 0, err
		}
	case fieldDataHeader:
		fd.DataHeader = v
	case fieldAppMetadata:
		fd.AppMetadata = v
	case fieldDataBody:
		fd.DataBody = v
	}
	return n, nil
}

// consumed turns a protowire length (an error code when negative) into a
// length and an error.
func consumed(n int) (int, error) {
	if n < 0 {
		return 0, protowire.ParseError(n)
	}
	return n, nil
}
