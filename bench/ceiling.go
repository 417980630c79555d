package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc"
)

// Ceiling is the fastest this machine moves bytes one way: a bound on a
// job's throughput.
type Ceiling struct {
	Name    string
	Bytes   int64
	Seconds float64
}

// Short is the ceiling's name up to its colon ("libp2p").
func (c Ceiling) Short() string { return strings.SplitN(c.Name, ":", 2)[0] }

// MBps is the ceiling's rate in 10^6 bytes per second.
func (c Ceiling) MBps() float64 { return float64(c.Bytes) / 1e6 / c.Seconds }

// Ceilings measures the three ceilings of a job's data path, each over
// bytes: a Go copy between two memory buffers, one libp2p TLS stream
// between two local hosts (dht.StreamCeiling), and one Arrow Flight DoPut
// stream of about 1 MiB record batches to an in-process server that
// discards them.
func Ceilings(ctx context.Context, bytes int64) ([]Ceiling, error) {
	out := []Ceiling{{Name: "memory: Go copy, 64 MiB buffers", Bytes: bytes, Seconds: copyCeiling(bytes).Seconds()}}
	d, err := dht.StreamCeiling(ctx, bytes)
	if err != nil {
		return out, err
	}
	out = append(out, Ceiling{Name: "libp2p: 1 TLS stream, loopback", Bytes: bytes, Seconds: d.Seconds()})
	d, err = FlightCeiling(ctx, bytes)
	if err != nil {
		return out, err
	}
	return append(out, Ceiling{Name: "Flight: 1 DoPut stream, 1 MiB batches", Bytes: bytes, Seconds: d.Seconds()}), nil
}

// copyCeiling copies bytes from one 64 MiB buffer to another (larger than
// any cache), in full-buffer copies.
func copyCeiling(bytes int64) time.Duration {
	const size = 64 << 20
	src, dst := make([]byte, min(bytes, size)), make([]byte, min(bytes, size))
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // fault the pages in before the clock starts
	start := time.Now()
	for left := bytes; left > 0; left -= int64(len(src)) {
		n := min(left, int64(len(src)))
		copy(dst[:n], src[:n])
	}
	return time.Since(start)
}

// FlightCeiling streams bytes of generated ~1 MiB record batches (Arrow
// buffer bytes) over one DoPut to a Flight server on 127.0.0.1 that reads
// and discards them, and returns the time from the first batch until the
// server's reply.
func FlightCeiling(ctx context.Context, bytes int64) (time.Duration, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := flight.NewServerWithMiddleware(nil, grpc.MaxRecvMsgSize(api.MaxMessageBytes), grpc.MaxSendMsgSize(api.MaxMessageBytes))
	srv.RegisterFlightService(&discardServer{})
	srv.InitListener(lis)
	go func() { _ = srv.Serve() }()
	defer srv.Shutdown()
	c, err := api.Dial(srv.Addr().String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	gen := table.GenConfig{Rows: 8192, PayloadBytes: 100, Seed: 1}
	rec := table.GenTask(memory.DefaultAllocator, gen, 0, 1) // 8192 rows of 128 B: 1 MiB
	defer rec.Release()
	return flightPut(ctx, c, rec, bytes)
}

// flightPut sends rec over one DoPut until bytes are sent, then waits for
// the server's result.
func flightPut(ctx context.Context, c flight.Client, rec arrow.Record, bytes int64) (time.Duration, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.DoPut(ctx)
	if err != nil {
		return 0, fmt.Errorf("job: flight ceiling: %w", err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(rec.Schema()))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("ceiling")})
	start := time.Now()
	size := table.RecordBytes(rec)
	for sent := int64(0); sent < bytes; sent += size {
		if err := w.Write(rec); err != nil {
			return 0, fmt.Errorf("job: flight ceiling: write: %w", err)
		}
	}
	if err := errors.Join(w.Close(), stream.CloseSend()); err != nil {
		return 0, fmt.Errorf("job: flight ceiling: close: %w", err)
	}
	for {
		if _, err := stream.Recv(); err == io.EOF {
			return time.Since(start), nil
		} else if err != nil {
			return 0, fmt.Errorf("job: flight ceiling: %w", err)
		}
	}
}

// discardServer is a Flight server whose DoPut reads every batch and
// discards it.
type discardServer struct {
	flight.BaseFlightServer
}

// DoPut reads the batches of one put and answers with an empty result.
func (*discardServer) DoPut(stream flight.FlightService_DoPutServer) error {
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		return err
	}
	defer rdr.Release()
	for rdr.Next() {
	}
	if err := rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return stream.Send(&flight.PutResult{})
}
