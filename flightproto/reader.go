package flightproto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reader reads the record batches of a Flight stream (a DoPut or a DoGet)
// as flight.NewRecordReader's reader does, except that each batch's arrays
// are built over the received message's body instead of copied out of it:
// the codec gives every FlightData a buffer of its own (see codec), so the
// record can keep it. Every length, offset and null count is checked before
// an array is built (table.Codec.DecodeMessage).
//
// Only flat schemas of the types table.Codec takes are read: a schema
// message it refuses (dictionaries, nested types, or bytes that are not a
// schema at all) is an error wrapping ErrMalformed, and its bytes go to no
// other decoder (Arrow's reader allocates by the counts a message claims).
// Not safe for concurrent use.
type Reader struct {
	stream flight.DataStreamReader
	pooled msgReceiver // set: messages are received into pooled buffers
	codec  *table.Codec
	desc   *flight.FlightDescriptor
	appMD  []byte
	rec    arrow.Record
	err    error
}

// NewReader reads the schema message from stream and returns a Reader of
// its batches, allocating (for compressed bodies) from mem. A first
// message that is not a schema table.Codec takes is an error wrapping
// ErrMalformed; one the stream failed to deliver is the stream's error.
func NewReader(stream flight.DataStreamReader, mem memory.Allocator) (*Reader, error) {
	first, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	r := &Reader{stream: stream, desc: first.FlightDescriptor}
	schema, err := table.SchemaFromMessage(first.DataHeader, first.DataBody)
	if err == nil {
		r.codec, err = table.NewCodec(schema, mem)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the stream's schema message: %w", ErrMalformed, err)
	}
	return r, nil
}

// NewPooledReader is NewReader for a consumer that keeps a record, or any
// slice of its buffers, only by Retaining it, as Arrow's contract asks:
// each batch is received into a buffer from its connection's Pool (Dial's
// clients and ServerOptions' servers have one each), which goes back to
// the pool when the last reference to the batch's buffers is released.
// That saves the allocation, clearing and collection of every message. A
// consumer that reads a buffer after releasing it (a slice kept from a
// released record) would read another message's bytes; a pool with
// PoolConfig.PoisonReleased overwrites released buffers so that such a bug
// shows. Streams
// of other codecs read as NewReader's.
func NewPooledReader(stream flight.DataStreamReader, mem memory.Allocator) (*Reader, error) {
	r, err := NewReader(stream, mem)
	if err == nil {
		r.pooled, _ = stream.(msgReceiver)
	}
	return r, err
}

// msgReceiver is a gRPC stream's RecvMsg, which the codec decodes.
type msgReceiver interface{ RecvMsg(m any) error }

// Schema returns the stream's schema.
func (r *Reader) Schema() *arrow.Schema {
	return r.codec.Schema()
}

// LatestFlightDescriptor returns the descriptor sent with the stream's
// first message (nil if none).
func (r *Reader) LatestFlightDescriptor() *flight.FlightDescriptor {
	return r.desc
}

// LatestAppMetadata returns the app metadata of the last message read.
func (r *Reader) LatestAppMetadata() []byte {
	return r.appMD
}

// Next advances to the next batch; false at the end of the stream or on an
// error (see Err).
func (r *Reader) Next() bool {
	r.releaseRecord()
	if r.err != nil {
		return false
	}
	r.rec, r.err = r.nextRecord()
	return r.rec != nil
}

// nextRecord decodes the next FlightData that carries a batch; nil, nil at
// the end of the stream.
func (r *Reader) nextRecord() (arrow.Record, error) {
	for {
		d, err := r.recv()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		r.appMD = d.AppMetadata
		if d.buf != nil {
			r.appMD = bytes.Clone(d.AppMetadata) // outlives the buffer
		}
		if len(d.DataHeader) == 0 {
			d.release()
			continue // metadata only
		}
		rec, err := r.decode(d)
		if err != nil {
			return nil, fmt.Errorf("%w: reading a batch: %w", ErrMalformed, err)
		}
		return rec, nil
	}
}

// recv receives the next message: into a pooled buffer in pooled mode.
func (r *Reader) recv() (*pooledData, error) {
	if r.pooled != nil {
		d := new(pooledData)
		return d, malformedOr(r.pooled.RecvMsg(d))
	}
	fd, err := r.stream.Recv()
	if err != nil {
		return nil, malformedOr(err)
	}
	d := new(pooledData)
	d.DataHeader, d.DataBody, d.AppMetadata = fd.DataHeader, fd.DataBody, fd.AppMetadata
	return d, nil
}

// decode decodes d's batch. A pooled message's body becomes a buffer that
// hands d's buffer back to the pool when the record's last reference to it
// is released (at once when the record does not refer to it, or on error).
func (r *Reader) decode(d *pooledData) (arrow.Record, error) {
	if d.buf == nil {
		return r.codec.DecodeMessage(d.DataHeader, d.DataBody)
	}
	body := memory.NewBufferWithAllocator(d.DataBody, msgBody{d})
	defer body.Release()
	return r.codec.DecodeMessageBuffer(d.DataHeader, body)
}

// msgBody is the memory.Allocator of a pooled message's body: it never
// allocates, and Free releases the message.
type msgBody struct{ d *pooledData }

func (msgBody) Allocate(int) []byte { panic("flightproto: a message body does not allocate") }

func (msgBody) Reallocate(int, []byte) []byte {
	panic("flightproto: a message body does not allocate")
}

// Free releases the message once its body's last reference is gone.
func (m msgBody) Free([]byte) { m.d.release() }

// Record returns the current batch, valid until the next call to Next or
// Release (Retain it to keep it longer).
func (r *Reader) Record() arrow.Record {
	return r.rec
}

// Err returns the error that ended Next, nil at a clean end of stream.
func (r *Reader) Err() error {
	return r.err
}

// Release releases the current batch.
func (r *Reader) Release() {
	r.releaseRecord()
}

func (r *Reader) releaseRecord() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
}

// malformedOr marks the error gRPC reports when the codec could not decode
// a received message (a FlightData that is not valid protobuf) with
// ErrMalformed: gRPC turns the codec's error into an Internal status whose
// message alone says so.
func malformedOr(err error) error {
	st, ok := status.FromError(err)
	if ok && st.Code() == codes.Internal && strings.Contains(st.Message(), "failed to unmarshal") {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return err
}
