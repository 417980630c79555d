package flightproto

import (
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"
)

// wire is a Flight stream in memory: Send encodes as gRPC would (so a
// reused buffer cannot leak into earlier messages), Recv decodes.
type wire struct{ msgs [][]byte }

func (w *wire) Send(fd *flight.FlightData) error {
	b, err := proto.Marshal(fd)
	w.msgs = append(w.msgs, b)
	return err
}

func (w *wire) Recv() (*flight.FlightData, error) {
	if len(w.msgs) == 0 {
		return nil, io.EOF
	}
	fd := new(flight.FlightData)
	err := decodeFlightData(w.msgs[0], fd)
	w.msgs = w.msgs[1:]
	return fd, err
}

func intRecord(mem memory.Allocator, from, n int64) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for v := from; v < from+n; v++ {
		b.Append(v)
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecord(schema, []arrow.Array{col}, n)
}

// TestWriterRoundTrip writes batches of growing and shrinking sizes (the
// body buffer is reused and regrown), with a descriptor on the first and
// app metadata on one, and reads them back with Arrow's Flight reader.
func TestWriterRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sizes := []int64{3, 1000, 10, 50000, 0, 7}
	var w wire
	writeIntsWith(t, NewWriter, mem, &w, sizes, 2)
	checkStream(t, &w, sizes)
}

func checkStream(t *testing.T, w *wire, sizes []int64) {
	rdr, err := flight.NewRecordReader(w)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	if d := rdr.LatestFlightDescriptor(); d == nil || string(d.Cmd) != "cmd" {
		t.Fatalf("descriptor %v, want cmd", d)
	}
	var next int64
	for i := 0; rdr.Next(); i++ {
		rec := rdr.Record()
		if rec.NumRows() != sizes[i] {
			t.Fatalf("batch %d: %d rows, want %d", i, rec.NumRows(), sizes[i])
		}
		if md := string(rdr.LatestAppMetadata()); (i == 2) != (md == "md") {
			t.Errorf("batch %d: app metadata %q", i, md)
		}
		for _, v := range rec.Column(0).(*array.Int64).Int64Values() {
			if v != next {
				t.Fatalf("batch %d: value %d, want %d", i, v, next)
			}
			next++
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
}
