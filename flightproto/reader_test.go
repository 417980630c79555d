package flightproto

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/mem"
)

// codecWire is a Flight stream in memory that goes through the codec both
// ways, cut into frames as gRPC hands them over, so that the Reader sees
// the buffers it sees on a real connection.
type codecWire struct {
	c    *codec
	msgs []mem.BufferSlice
	got  []*flight.FlightData
}

func (w *codecWire) Send(fd *flight.FlightData) error { return w.SendMsg(fd) }

// SendMsg is a gRPC stream's: what NewSharingWriter sends through.
func (w *codecWire) SendMsg(m any) error {
	data, err := w.c.Marshal(m)
	if err != nil {
		return err
	}
	flat := data.Materialize()
	data.Free()
	var frames mem.BufferSlice
	for len(flat) > 0 {
		n := min(len(flat), 16384)
		frames = append(frames, mem.SliceBuffer(flat[:n]))
		flat = flat[n:]
	}
	w.msgs = append(w.msgs, frames)
	return nil
}

func (w *codecWire) Recv() (*flight.FlightData, error) {
	if len(w.msgs) == 0 {
		return nil, io.EOF
	}
	fd := new(flight.FlightData)
	err := w.c.Unmarshal(w.msgs[0], fd)
	w.msgs = w.msgs[1:]
	w.got = append(w.got, fd)
	return fd, err
}

// TestReaderZeroCopy writes batches (with the copying and the sharing
// writer) and reads them back with Reader: the same values, the descriptor
// and app metadata, and every batch's values inside the received body,
// which the codec placed 8-byte aligned.
func TestReaderZeroCopy(t *testing.T) {
	writers := map[string]func(flight.DataStreamWriter, ...ipc.Option) *Writer{"copying": NewWriter, "sharing": NewSharingWriter}
	for name, newWriter := range writers {
		t.Run(name, func(t *testing.T) {
			sizes := []int64{3, 1000, 0, 50000, 7}
			w := &codecWire{c: newCodec(new(bufferPool))}
			writeIntsWith(t, newWriter, memory.DefaultAllocator, w, sizes, 1)
			checkReadBack(t, w, sizes)
		})
	}
}

// checkReadBack reads w's stream with a Reader and checks it against
// writeIntsWith's batches of sizes.
func checkReadBack(t *testing.T, w *codecWire, sizes []int64) {
	rdr, err := NewReader(w, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if d := rdr.LatestFlightDescriptor(); d == nil || string(d.Cmd) != "cmd" {
		t.Fatalf("descriptor %v, want cmd", d)
	}
	var at int64
	for i := 0; rdr.Next(); i++ {
		rec := rdr.Record()
		if rec.NumRows() != sizes[i] {
			t.Fatalf("batch %d: %d rows, want %d", i, rec.NumRows(), sizes[i])
		}
		checkInts(t, rec, at)
		checkInBody(t, rec, w.got[len(w.got)-1].DataBody)
		if i == 1 && string(rdr.LatestAppMetadata()) != "md" {
			t.Fatalf("batch 1: app metadata %q, want md", rdr.LatestAppMetadata())
		}
		at += sizes[i]
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestReaderRefusesUnsupported: a stream whose schema the zero-copy decoder
// does not take (a list column) is refused with ErrMalformed; no other
// decoder reads it.
func TestReaderRefusesUnsupported(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	lb.Append(true)
	lb.ValueBuilder().(*array.Int64Builder).Append(1)
	rec := b.NewRecord()
	defer rec.Release()
	w := &codecWire{c: newCodec(new(bufferPool))}
	fw := NewWriter(w, ipc.WithSchema(schema))
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	fw.Close()
	if _, err := NewReader(w, memory.DefaultAllocator); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), `"l"`) {
		t.Fatalf("reading a list column: %v, want ErrMalformed naming the column", err)
	}
}

// TestReaderCorrupt: a batch whose body is cut short is an error, not a
// panic or a short record.
func TestReaderCorrupt(t *testing.T) {
	w := &codecWire{c: newCodec(new(bufferPool))}
	writeInts(t, w, []int64{100})
	rdr, err := NewReader(w, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	fd := new(flight.FlightData)
	if err := w.c.Unmarshal(w.msgs[0], fd); err != nil {
		t.Fatal(err)
	}
	fd.DataBody = fd.DataBody[:len(fd.DataBody)/2]
	w.msgs = nil
	if err := w.Send(fd); err != nil {
		t.Fatal(err)
	}
	if rdr.Next() || rdr.Err() == nil {
		t.Fatalf("a truncated body read as %v", rdr.Record())
	}
}

func writeInts(t *testing.T, w flight.DataStreamWriter, sizes []int64) {
	t.Helper()
	writeIntsWith(t, NewWriter, memory.DefaultAllocator, w, sizes, 1)
}

// writeIntsWith writes batches of sizes rows of consecutive ints with a
// writer of newWriter, a descriptor on the first and app metadata "md" on
// batch mdAt, and closes the stream.
func writeIntsWith(t *testing.T, newWriter func(flight.DataStreamWriter, ...ipc.Option) *Writer, mem memory.Allocator, w flight.DataStreamWriter, sizes []int64, mdAt int) {
	t.Helper()
	fw := newWriter(w, ipc.WithSchema(intRecord(mem, 0, 0).Schema()))
	fw.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("cmd")})
	var at int64
	for i, n := range sizes {
		rec := intRecord(mem, at, n)
		var err error
		if i == mdAt {
			err = fw.WriteWithAppMetadata(rec, []byte("md"))
		} else {
			err = fw.Write(rec)
		}
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		at += n
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

func checkInts(t *testing.T, rec arrow.Record, from int64) {
	t.Helper()
	for j, v := range rec.Column(0).(*array.Int64).Int64Values() {
		if v != from+int64(j) {
			t.Fatalf("row %d: %d, want %d", j, v, from+int64(j))
		}
	}
}

// checkInBody fails unless rec's values lie inside body.
func checkInBody(t *testing.T, rec arrow.Record, body []byte) {
	t.Helper()
	if rec.NumRows() == 0 {
		return
	}
	vals := rec.Column(0).Data().Buffers()[1].Bytes()
	lo, hi := uintptr(unsafe.Pointer(&body[0])), uintptr(unsafe.Pointer(&body[0]))+uintptr(len(body))
	if p := uintptr(unsafe.Pointer(&vals[0])); p < lo || p >= hi {
		t.Fatal("the batch's values were copied out of the received body")
	}
	if lo%8 != 0 {
		t.Fatalf("body at %#x, not 8-byte aligned", lo)
	}
}
