package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// preauthBound is how much a node's peak resident memory may grow while
// it refuses the unauthenticated calls of TestPreAuthFlood (which offer
// it 16 x 64 MiB): the token is checked when a call's headers arrive,
// before any message is read.
const preauthBound = 64 << 20

// TestPreAuthFlood makes 16 concurrent unauthenticated GetSchema,
// GetFlightInfo and DoAction calls of 64 MiB messages each at a serve
// process that requires a token: every one is refused Unauthenticated,
// the node's peak RSS grows by less than preauthBound, and it still
// serves a call with the token. Then the malformed schema message of a
// huge field count, with the token: refused, the node stays up.
func TestPreAuthFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve processes: skipped with -short")
	}
	c := startProcsToken(t, 1, "preauth-token")
	p := c.procs[0]
	anon, err := flightproto.Dial(p.api)
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	floodBounded(ctx, t, p, oversizedCalls(anon, false), "Unauthenticated", func(err error) bool {
		return status.Code(err) == codes.Unauthenticated
	})
	stillServes(ctx, t, p, "a call with the token after the flood")
	t.Run("huge field count", func(t *testing.T) { hugeFieldCount(ctx, t, c) })
}

// oversizedCalls are calls of fc that each carry a 64 MiB message:
// GetSchema, GetFlightInfo, DoAction and, with handshake, Handshake.
func oversizedCalls(fc flight.Client, handshake bool) []func(context.Context) error {
	big := bytes.Repeat([]byte{'x'}, 64<<20)
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: big}
	calls := []func(context.Context) error{
		func(ctx context.Context) error { _, err := fc.GetSchema(ctx, desc); return err },
		func(ctx context.Context) error { _, err := fc.GetFlightInfo(ctx, desc); return err },
		func(ctx context.Context) error {
			s, err := fc.DoAction(ctx, &flight.Action{Type: flightproto.ActionCreate, Body: big})
			if err == nil {
				_, err = s.Recv()
			}
			return err
		},
	}
	if handshake {
		calls = append(calls, func(ctx context.Context) error {
			s, err := fc.Handshake(ctx)
			if err == nil {
				if err = s.Send(&flight.HandshakeRequest{Payload: big}); err == nil || errors.Is(err, io.EOF) {
					_, err = s.Recv()
				}
			}
			return err
		})
	}
	return calls
}

// floodBounded makes 16 of calls at once (in turn) at p, checks that each
// was refused as refused says (want names it), and that p's peak RSS grew
// by less than preauthBound.
func floodBounded(ctx context.Context, t *testing.T, p *proc, calls []func(context.Context) error, want string, refused func(error) bool) {
	t.Helper()
	before := nodePeakRSS(t, p.cmd.Process.Pid)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() { errs[i] = calls[i%len(calls)](ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if !refused(err) {
			t.Errorf("call %d of a 64 MiB message: %v, want %s", i, err, want)
		}
	}
	after := nodePeakRSS(t, p.cmd.Process.Pid)
	t.Logf("node peak RSS %d MiB before the 64 MiB calls, %d MiB after", before>>20, after>>20)
	if after-before >= preauthBound {
		t.Errorf("the node's peak RSS grew by %d MiB, bound %d MiB", (after-before)>>20, preauthBound>>20)
	}
}

// stillServes fails t unless p answers a call with the token (what names
// what came before it).
func stillServes(ctx context.Context, t *testing.T, p *proc, what string) {
	t.Helper()
	cl, err := p.dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Members(ctx); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// hugeFieldCount sends, with the token, the DoPut schema message whose
// field count says 2^31-1 (four bytes changed from a real one): refused
// InvalidArgument, and the process still serves.
func hugeFieldCount(ctx context.Context, t *testing.T, c *procCluster) {
	p := c.procs[0]
	fc, err := flightproto.DialAuth(p.api, flightproto.ClientAuth{Token: c.token})
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	rec := table.GenTask(nil, table.GenConfig{Rows: 10}, 0, 1)
	defer rec.Release()
	var first *flight.FlightData
	w := flightproto.NewWriter(sendFunc(func(fd *flight.FlightData) error {
		if first == nil {
			first = &flight.FlightData{DataHeader: bytes.Clone(fd.DataHeader)}
		}
		return nil
	}), ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	meta := first.DataHeader
	at := schemaFieldCountAt(meta)
	if n := binary.LittleEndian.Uint32(meta[at:]); n != uint32(rec.NumCols()) {
		t.Fatalf("the field count's position holds %d, want %d", n, rec.NumCols())
	}
	binary.LittleEndian.PutUint32(meta[at:], 1<<31-1)
	first.FlightDescriptor = &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"shuffle":"none","task":0,"attempt":0}`)}
	stream, err := fc.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = stream.Send(first)
	_ = stream.CloseSend()
	if _, err := stream.Recv(); status.Code(err) != codes.InvalidArgument {
		t.Errorf("the put of a schema of 2^31-1 fields: %v, want InvalidArgument", err)
	}
	stillServes(ctx, t, p, "the node after the malformed put")
}

// sendFunc is a flight.DataStreamWriter of a function.
type sendFunc func(*flight.FlightData) error

func (f sendFunc) Send(fd *flight.FlightData) error { return f(fd) }

// schemaFieldCountAt returns the position of the field count in a schema
// message's metadata (Message.header -> Schema.fields -> vector length).
func schemaFieldCountAt(meta []byte) uint32 {
	u32 := func(p uint32) uint32 { return binary.LittleEndian.Uint32(meta[p:]) }
	slot := func(table uint32, n uint32) uint32 {
		vt := uint32(int32(table) - int32(u32(table)))
		return table + uint32(binary.LittleEndian.Uint16(meta[vt+4+2*n:]))
	}
	hdr := slot(u32(0), 2)
	schema := hdr + u32(hdr)
	fields := slot(schema, 1)
	return fields + u32(fields)
}

// nodePeakRSS is the peak resident set (VmHWM) of process pid, in bytes.
func nodePeakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}
