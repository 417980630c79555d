package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// putFrames is a DoPut's messages as a client would send them: the
// descriptor of cmd with the schema message, then one message per batch.
func putFrames(t testing.TB, cmd flightproto.PutCmd, recs ...arrow.Record) []*flight.FlightData {
	t.Helper()
	var frames []*flight.FlightData
	w := flightproto.NewWriter(collect{&frames}, ipc.WithSchema(recs[0].Schema()))
	c, _ := json.Marshal(cmd)
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: c})
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return frames
}

// collect is a flight.DataStreamWriter that keeps what it is sent.
type collect struct{ out *[]*flight.FlightData }

func (c collect) Send(fd *flight.FlightData) error {
	*c.out = append(*c.out, &flight.FlightData{FlightDescriptor: fd.FlightDescriptor,
		DataHeader: bytes.Clone(fd.DataHeader), DataBody: bytes.Clone(fd.DataBody), AppMetadata: bytes.Clone(fd.AppMetadata)})
	return nil
}

// sendPut sends frames as one DoPut and returns the call's outcome.
func sendPut(ctx context.Context, fc flight.Client, frames []*flight.FlightData) error {
	stream, err := fc.DoPut(ctx)
	if err != nil {
		return err
	}
	for _, fd := range frames {
		if err := stream.Send(fd); err != nil {
			break // the server ended the call: Recv has its status
		}
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// fieldCountAt returns the position of the field count of a schema
// message's metadata (Message.header -> Schema.fields -> vector length).
func fieldCountAt(meta []byte) uint32 {
	u32 := func(p uint32) uint32 { return binary.LittleEndian.Uint32(meta[p:]) }
	slot := func(table uint32, n int) uint32 {
		vt := uint32(int32(table) - int32(u32(table)))
		return table + uint32(binary.LittleEndian.Uint16(meta[vt+4+2*uint32(n):]))
	}
	hdr := slot(u32(0), 2)
	schema := hdr + u32(hdr)
	fields := slot(schema, 1)
	return fields + u32(fields)
}

// TestPutHugeFieldCount sends the schema message whose field count says
// 2^31-1 (four bytes changed): the node refuses it with InvalidArgument
// instead of allocating the claimed fields, and stays up. No shuffle need
// exist.
func TestPutHugeFieldCount(t *testing.T) {
	fc := startNode(t)
	rec := table.GenTask(nil, table.GenConfig{Rows: 10}, 0, 1)
	defer rec.Release()
	frames := putFrames(t, flightproto.PutCmd{Shuffle: "none", Task: 0, Attempt: 0}, rec)
	meta := frames[0].DataHeader
	if n := binary.LittleEndian.Uint32(meta[fieldCountAt(meta):]); n != uint32(rec.NumCols()) {
		t.Fatalf("the field count's position holds %d, want %d", n, rec.NumCols())
	}
	binary.LittleEndian.PutUint32(meta[fieldCountAt(meta):], 1<<31-1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 3 {
		wantCode(t, sendPut(ctx, fc, frames[:1]), codes.InvalidArgument, "schema")
	}
	if _, err := doAction(t, fc, ActionMembers, nil); err != nil {
		t.Fatalf("the node after the malformed puts: %v", err)
	}
}

// TestPutCorruptBatch: a put whose batch does not decode, or whose
// FlightData is not protobuf, is InvalidArgument (bad input), not Internal.
func TestPutCorruptBatch(t *testing.T) {
	fc := startNode(t)
	sp := dataframeSpec(t, "corrupt")
	if _, err := doAction(t, fc, ActionCreate, sp); err != nil {
		t.Fatal(err)
	}
	rec := table.GenTask(nil, table.GenConfig{Rows: 100}, 0, 2)
	defer rec.Release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, corrupt := range []func(fd *flight.FlightData){
		func(fd *flight.FlightData) { fd.DataBody = fd.DataBody[:len(fd.DataBody)/2] },
		func(fd *flight.FlightData) { fd.DataHeader = fd.DataHeader[:len(fd.DataHeader)/2] },
		func(fd *flight.FlightData) { fd.DataHeader[len(fd.DataHeader)/3] ^= 0xff },
	} {
		frames := putFrames(t, flightproto.PutCmd{Shuffle: sp.ID, Task: 0, Attempt: uint32(i)}, rec)
		corrupt(frames[1])
		wantCode(t, sendPut(ctx, fc, frames), codes.InvalidArgument, "corrupt")
	}
}

// FuzzDoPut feeds arbitrary FlightData streams to DoPut of a real API
// server (over gRPC on loopback): whatever the bytes, the node must not
// crash, and must answer with a code the protocol document lists for
// DoPut. The seeds are real frames of a put of a dataframe shuffle that
// exists on the node (each fuzz input is a sequence of frames, see
// decodeFrames).
func FuzzDoPut(f *testing.F) {
	fc := startNode(f)
	sp := dataframeSpec(f, "fuzz")
	if _, err := doAction(f, fc, ActionCreate, sp); err != nil {
		f.Fatal(err)
	}
	rec := table.GenTask(nil, table.GenConfig{Rows: 20}, 0, 2)
	defer rec.Release()
	for task := range uint64(2) {
		f.Add(encodeFrames(putFrames(f, flightproto.PutCmd{Shuffle: sp.ID, Task: task, Attempt: 7}, rec, rec)))
	}
	f.Add(encodeFrames(putFrames(f, flightproto.PutCmd{Shuffle: sp.ID, Task: 0, Attempt: 8, Rows: 20}, rec)))
	allowed := map[codes.Code]bool{codes.OK: true, codes.InvalidArgument: true, codes.NotFound: true,
		codes.AlreadyExists: true, codes.FailedPrecondition: true, codes.PermissionDenied: true, codes.ResourceExhausted: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := sendPut(ctx, fc, decodeFrames(data))
		if code := codeOf(err); !allowed[code] {
			t.Fatalf("DoPut answered %s: %v", code, err)
		}
		if _, err := fc.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"shuffle":"fuzz"}`)}); err != nil {
			t.Fatalf("the node after the put: %v", err)
		}
	})
}

// encodeFrames writes frames as a fuzz input: each as its protobuf
// encoding after a 2-byte little-endian length (at most 64 KiB each).
func encodeFrames(frames []*flight.FlightData) []byte {
	var out []byte
	for _, fd := range frames {
		b, err := protoMarshal(fd)
		if err != nil || len(b) > 0xffff {
			panic("flightproto fuzz seed: frame too large")
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(len(b)))
		out = append(out, b...)
	}
	return out
}

// decodeFrames reads encodeFrames' form back; a frame that is not valid
// protobuf is sent as a FlightData of those bytes in its header, and a
// length past the end takes what is left.
func decodeFrames(data []byte) []*flight.FlightData {
	var frames []*flight.FlightData
	for len(data) >= 2 && len(frames) < 64 {
		n := min(int(binary.LittleEndian.Uint16(data)), len(data)-2)
		b := data[2 : 2+n]
		data = data[2+n:]
		fd := new(flight.FlightData)
		if protoUnmarshal(b, fd) != nil {
			fd = &flight.FlightData{DataHeader: b}
		}
		frames = append(frames, fd)
	}
	return frames
}

func protoMarshal(fd *flight.FlightData) ([]byte, error)   { return proto.Marshal(fd) }
func protoUnmarshal(b []byte, fd *flight.FlightData) error { return proto.Unmarshal(b, fd) }
func codeOf(err error) codes.Code                          { return status.Code(err) }
