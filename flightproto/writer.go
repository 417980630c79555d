package flightproto

import (
	"runtime"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Writer writes record batches to a Flight stream (a DoPut or a DoGet) as
// flight.NewRecordWriter's writer does, except that it serializes each
// batch's body into one buffer sized to fit it and reused for the stream's
// later batches (Arrow's grows a bytes.Buffer from empty on every stream).
// Not safe for concurrent use; Close ends the IPC stream.
type Writer struct {
	*ipc.Writer
	pw *payloadWriter
}

// NewWriter returns a Writer on stream; opts are ipc.NewWriter's (the
// schema is required).
func NewWriter(stream flight.DataStreamWriter, opts ...ipc.Option) *Writer {
	pw := &payloadWriter{stream: stream}
	return &Writer{Writer: ipc.NewWriterWithPayloadWriter(pw, opts...), pw: pw}
}

// NewSharingWriter is NewWriter for batches whose buffers are Go memory
// (memory.GoAllocator's, or plain slices) that nothing changes after Write:
// it hands those buffers to gRPC as they are, where NewWriter first copies
// each batch's body into one buffer (and gRPC's codec copies that again).
// gRPC writes a message after Send has returned, so the buffers must stay
// unchanged until the stream ends; the garbage collector keeps them alive.
// A stream that cannot send other messages than FlightData gets the
// copying writer.
func NewSharingWriter(stream flight.DataStreamWriter, opts ...ipc.Option) *Writer {
	w := NewWriter(stream, opts...)
	w.pw.raw, _ = stream.(msgSender)
	return w
}

// msgSender is a gRPC stream's SendMsg, which the codec encodes.
type msgSender interface{ SendMsg(m any) error }

// SetFlightDescriptor sends d with the next message (only that one).
func (w *Writer) SetFlightDescriptor(d *flight.FlightDescriptor) { w.pw.fd.FlightDescriptor = d }

// Write sends rec (the caller keeps its reference).
func (w *Writer) Write(rec arrow.Record) error {
	defer func() { w.pw.fd.FlightDescriptor = nil }()
	return w.Writer.Write(rec)
}

// WriteKept is Write for a record whose buffers stay valid only while keep
// is reachable (memory outside the Go heap, such as an offheap.Arena's): a
// sharing writer hands gRPC references that hold keep until gRPC frees
// them, after the bytes are written; a copying writer is done with the
// buffers when WriteKept returns.
func (w *Writer) WriteKept(rec arrow.Record, keep any) error {
	w.pw.keep = keep
	defer func() { w.pw.keep = nil }()
	err := w.Write(rec)
	runtime.KeepAlive(keep)
	return err
}

// WriteReleased is Write for a record whose reference the caller hands
// over: the writer releases it once nothing reads its buffers any more.
// A sharing writer does that when gRPC has written and freed every buffer
// it was handed by reference, which may be after WriteReleased returns; a
// copying writer when the batch was copied. A record whose buffers go back
// to a pool when it is released (mempool.Pool) must be written this way:
// released after Write, its buffers could be reused while gRPC still
// writes them.
func (w *Writer) WriteReleased(rec arrow.Record) error {
	r := &releaser{rec: rec}
	r.refs.Store(1) // the writer's own, dropped when Write returned
	defer r.done()
	return w.WriteKept(rec, r)
}

// releaser releases a record when the last of its holders is done: the
// writer, and each buffer of its body that gRPC holds by reference.
type releaser struct {
	rec  arrow.Record
	refs atomic.Int64
}

func (r *releaser) hold() { r.refs.Add(1) }

func (r *releaser) done() {
	if r.refs.Add(-1) == 0 {
		r.rec.Release()
	}
}

// WriteWithAppMetadata sends rec with app metadata md.
func (w *Writer) WriteWithAppMetadata(rec arrow.Record, md []byte) error {
	w.pw.fd.AppMetadata = md
	defer func() { w.pw.fd.AppMetadata = nil }()
	return w.Write(rec)
}

// WriteReleasedWithAppMetadata is WriteReleased with app metadata md.
func (w *Writer) WriteReleasedWithAppMetadata(rec arrow.Record, md []byte) error {
	w.pw.fd.AppMetadata = md
	defer func() { w.pw.fd.AppMetadata = nil }()
	return w.WriteReleased(rec)
}

// payloadWriter sends IPC payloads as FlightData messages. gRPC has
// encoded a message when Send returns, so the body buffer is reused.
type payloadWriter struct {
	stream flight.DataStreamWriter
	raw    msgSender // set: send bodies by reference (NewSharingWriter)
	keep   any       // what the body's buffers need reachable (WriteKept)
	fd     flight.FlightData
	body   []byte
}

func (p *payloadWriter) Start() error { return nil }
func (p *payloadWriter) Close() error { return nil }

// WritePayload sends one payload (schema, batch or dictionary).
func (p *payloadWriter) WritePayload(pl ipc.Payload) error {
	meta := pl.Meta()
	defer meta.Release()
	p.fd.DataHeader = meta.Bytes()
	if p.raw != nil {
		return p.sendShared(pl)
	}
	if n := bodyLen(meta); int64(cap(p.body)) < n {
		p.body = make([]byte, 0, n)
	}
	p.body = p.body[:0]
	if err := pl.SerializeBody((*appender)(&p.body)); err != nil {
		return err
	}
	p.fd.DataBody = p.body
	return p.stream.Send(&p.fd)
}

// sendShared sends a FlightData whose body is pl's buffers and padding,
// referenced, not copied (see sharedData).
func (p *payloadWriter) sendShared(pl ipc.Payload) error {
	var body gather
	if err := pl.SerializeBody(&body); err != nil {
		return err
	}
	return p.raw.SendMsg(&sharedData{fd: &p.fd, body: body.parts, n: body.n, keep: p.keep})
}

// gather is an io.Writer that keeps references to what it is given.
type gather struct {
	parts [][]byte
	n     int
}

func (g *gather) Write(b []byte) (int, error) {
	if len(b) > 0 {
		g.parts = append(g.parts, b)
		g.n += len(b)
	}
	return len(b), nil
}

// bodyLen is the body length that a message's metadata announces.
func bodyLen(meta *memory.Buffer) int64 {
	body := memory.NewBufferBytes(nil)
	m := ipc.NewMessage(meta, body)
	defer m.Release()
	return m.BodyLen()
}

// appender is an io.Writer that appends to a byte slice.
type appender []byte

func (a *appender) Write(b []byte) (int, error) {
	*a = append(*a, b...)
	return len(b), nil
}
