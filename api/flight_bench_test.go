package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
)

// benchBatches is how many ~1 MiB batches one put or get carries.
const benchBatches = 8

// flightBench is a loopback Flight server with the API server's gRPC
// options and stream writer, whose DoPut drains the stream and whose DoGet
// streams benchBatches copies of one batch: Flight's cost alone.
type flightBench struct {
	flight.BaseFlightServer
	s   *Server
	rec arrow.Record
	srv flight.Server
}

// newFlightBench starts a bench server; rows int64 rows and a string
// column of 8 bytes a row make one batch (16 bytes a row).
func newFlightBench(b *testing.B, rows int) *flightBench {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	fb := &flightBench{s: &Server{mem: memory.DefaultAllocator}, rec: benchRecord(rows)}
	fb.srv = newFlightServer(fb, flightproto.NewPool(flightproto.PoolConfig{}), lis)
	go fb.srv.Serve()
	b.Cleanup(func() { fb.srv.Shutdown(); fb.rec.Release() })
	return fb
}

func benchRecord(rows int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	for i := range rows {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append("abcdefgh")
	}
	return rb.NewRecord()
}

func (fb *flightBench) DoPut(stream flight.FlightService_DoPutServer) error {
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(fb.s.mem))
	if err != nil {
		return err
	}
	defer rdr.Release()
	var rows int64
	for rdr.Next() {
		rows += rdr.Record().NumRows()
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	b, _ := json.Marshal(flightproto.PutReply{Rows: uint64(rows)})
	return stream.Send(&flight.PutResult{AppMetadata: b})
}

func (fb *flightBench) DoGet(_ *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	w := fb.s.newWriter(stream, fb.rec.Schema())
	for range benchBatches {
		if err := w.Write(fb.rec); err != nil {
			return err
		}
	}
	return w.Close()
}

func (fb *flightBench) bytes() int64 {
	var n int64
	for _, c := range fb.rec.Columns() {
		for _, buf := range c.Data().Buffers() {
			if buf != nil {
				n += int64(buf.Len())
			}
		}
	}
	return n * benchBatches
}

// benchRows makes a batch of about 1 MiB.
const benchRows = 1 << 16

// startFlightBench starts a loopback server and a client of it (closed
// with the benchmark) and sets the benchmark's bytes and parallelism.
func startFlightBench(b *testing.B) (*flightBench, *client.Client) {
	fb := newFlightBench(b, benchRows)
	c, err := client.Dial(fb.srv.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	b.SetBytes(fb.bytes())
	b.ReportAllocs()
	b.SetParallelism(2)
	return fb, c
}

// BenchmarkFlightPut puts benchBatches batches of ~1 MiB per op through a
// loopback server, with client.Put; parallel ops share one client.
func BenchmarkFlightPut(b *testing.B) {
	fb, c := startFlightBench(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := 0
			next := func() (arrow.Record, error) {
				if i == benchBatches {
					return nil, io.EOF
				}
				i++
				return fb.rec, nil
			}
			r, err := c.Put(context.Background(), flightproto.PutCmd{Shuffle: "bench"}, fb.rec.Schema(), next)
			if err != nil || r.Rows != benchBatches*benchRows {
				b.Errorf("put: %v, %d rows", err, r.Rows)
				return
			}
		}
	})
}

// BenchmarkFlightGet reads benchBatches batches of ~1 MiB per op from a
// loopback server, with client.Read; parallel ops share one client.
func BenchmarkFlightGet(b *testing.B) {
	fb, c := startFlightBench(b)
	ep := client.Endpoint{Addr: fb.srv.Addr().String(), Ticket: []byte("{}")}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var rows int64
			err := c.Read(context.Background(), ep, func(r arrow.Record) error {
				rows += r.NumRows()
				return nil
			})
			if err != nil || rows != benchBatches*benchRows {
				b.Errorf("get: %v, %d rows", err, rows)
				return
			}
		}
	})
}
