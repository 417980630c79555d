package flightproto

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/mem"
)

// heldWire is a stream whose SendMsg keeps what the codec made of each
// message, as gRPC's transport does until it has written it: the buffers
// are read and freed only when the test says so.
type heldWire struct {
	c    *codec
	held []mem.BufferSlice
}

func (w *heldWire) Send(fd *flight.FlightData) error { return w.SendMsg(fd) }

func (w *heldWire) SendMsg(m any) error {
	data, err := w.c.Marshal(m)
	if err != nil {
		return err
	}
	w.held = append(w.held, data)
	return nil
}

// write materializes the held messages into a codecWire, as the transport
// would write them, and frees them.
func (w *heldWire) write(out *codecWire) {
	for _, data := range w.held {
		flat := data.Materialize()
		data.Free()
		out.msgs = append(out.msgs, mem.BufferSlice{mem.SliceBuffer(flat)})
	}
	w.held = nil
}

// poisonAlloc overwrites every buffer it frees, as a pool's next user
// would, so that reading a released batch shows.
type poisonAlloc struct{ *memory.CheckedAllocator }

func (a poisonAlloc) Free(b []byte) {
	for i := range b {
		b[i] = 0xAA
	}
	a.CheckedAllocator.Free(b)
}

// TestWriteReleased: a sharing writer's WriteReleased keeps each batch
// until the transport has written and freed the buffers it was handed by
// reference (the batches' values arrive whole though their memory is
// poisoned when freed), then releases it; a copying writer releases it at
// once. Either way every buffer is freed exactly once.
func TestWriteReleased(t *testing.T) {
	sizes := []int64{3, 50000, 0, 20000}
	for name, newWriter := range map[string]func(flight.DataStreamWriter, ...ipc.Option) *Writer{"copying": NewWriter, "sharing": NewSharingWriter} {
		t.Run(name, func(t *testing.T) {
			alloc := poisonAlloc{memory.NewCheckedAllocator(memory.NewGoAllocator())}
			w := &heldWire{c: newCodec(new(bufferPool))}
			fw := newWriter(w, ipc.WithSchema(intRecord(alloc, 0, 0).Schema()))
			fw.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("cmd")})
			var at int64
			for _, n := range sizes {
				if err := fw.WriteReleased(intRecord(alloc, at, n)); err != nil {
					t.Fatal(err)
				}
				at += n
			}
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			held := alloc.CurrentAlloc()
			if name == "copying" && held != 0 {
				t.Errorf("%d bytes still held after a copying writer's WriteReleased", held)
			}
			if name == "sharing" && held == 0 {
				t.Error("the batches were released while the transport still held their buffers")
			}
			out := &codecWire{c: w.c}
			w.write(out)
			readInts(t, out, sizes)
			alloc.AssertSize(t, 0)
		})
	}
}

// readInts reads w's stream back and checks its batches against sizes
// rows of consecutive ints.
func readInts(t *testing.T, w *codecWire, sizes []int64) {
	t.Helper()
	rdr, err := NewReader(w, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var at int64
	i := 0
	for ; rdr.Next(); i++ {
		if rec := rdr.Record(); rec.NumRows() != sizes[i] {
			t.Fatalf("batch %d: %d rows, want %d", i, rec.NumRows(), sizes[i])
		} else {
			checkInts(t, rec, at)
		}
		at += sizes[i]
	}
	if err := rdr.Err(); err != nil || i != len(sizes) {
		t.Fatalf("%d batches read, want %d (%v)", i, len(sizes), err)
	}
}
