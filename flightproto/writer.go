package flightproto

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/flight"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
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

// SetFlightDescriptor sends d with the next message (only that one).
func (w *Writer) SetFlightDescriptor(d *flight.FlightDescriptor) { w.pw.fd.FlightDescriptor = d }

// Write sends rec (the caller keeps its reference).
func (w *Writer) Write(rec arrow.Record) error {
	defer func() { w.pw.fd.FlightDescriptor = nil }()
	return w.Writer.Write(rec)
}

// WriteWithAppMetadata sends rec with app metadata md.
func (w *Writer) WriteWithAppMetadata(rec arrow.Record, md []byte) error {
	w.pw.fd.AppMetadata = md
	defer func() { w.pw.fd.AppMetadata = nil }()
	return w.Write(rec)
}

// payloadWriter sends IPC payloads as FlightData messages. gRPC has
// encoded a message when Send returns, so the body buffer is reused.
type payloadWriter struct {
	stream flight.DataStreamWriter
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
