package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCallSizeFlood makes 16 concurrent GetSchema, GetFlightInfo, DoAction
// and Handshake calls of 64 MiB messages each, with the token, at a serve
// process: every one is refused ResourceExhausted (over --max-call-message,
// 4 MiB by default) without the node reading it, so its peak RSS grows by
// less than preauthBound; the same connection then serves a DoPut of a
// batch over 4 MiB (refused only because its shuffle is unknown) and a
// call under the limit.
func TestCallSizeFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("runs serve processes: skipped with -short")
	}
	c := startProcsToken(t, 1, "callsize-token")
	p := c.procs[0]
	fc, err := flightproto.DialAuth(p.api, flightproto.ClientAuth{Token: c.token})
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	floodBounded(ctx, t, p, oversizedCalls(fc, true), "ResourceExhausted", func(err error) bool {
		return status.Code(err) == codes.ResourceExhausted && strings.Contains(err.Error(), "larger than max")
	})

	rec := table.GenTask(nil, table.GenConfig{Rows: 400_000}, 0, 1)
	defer rec.Release()
	var frames []*flight.FlightData
	w := flightproto.NewWriter(sendFunc(func(fd *flight.FlightData) error {
		frames = append(frames, &flight.FlightData{DataHeader: bytes.Clone(fd.DataHeader), DataBody: bytes.Clone(fd.DataBody)})
		return nil
	}), ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if n := len(frames[len(frames)-1].DataBody); n <= 4<<20 {
		t.Fatalf("the batch is %d bytes, not over the 4 MiB call limit", n)
	}
	frames[0].FlightDescriptor = &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"shuffle":"none","task":0,"attempt":0}`)}
	stream, err := fc.DoPut(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range frames {
		if stream.Send(fd) != nil {
			break
		}
	}
	_ = stream.CloseSend()
	if _, err := stream.Recv(); status.Code(err) != codes.NotFound {
		t.Errorf("a DoPut of a batch over the call limit to an unknown shuffle: %v, want NotFound", err)
	}
	stillServes(ctx, t, p, "a call after the oversized ones")
}
