package flightproto

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/mem"

	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/offheap"
)

// TestSharedBodyHoldsKeep: a body whose bytes live in an arena keeps the
// arena mapped for as long as gRPC holds the marshalled message, however
// many collections run, and lets it go once gRPC frees the message.
func TestSharedBodyHoldsKeep(t *testing.T) {
	regions := offheap.NewPool(0, time.Second) // keeps no region: a freed arena is unmapped
	defer regions.Close()
	out, want := marshalFromArena(t, newCodec(&bufferPool{}), regions)
	for range 5 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if regions.Mapped() == 0 {
		t.Fatal("the arena was unmapped while gRPC held its bytes")
	}
	if got := out.Materialize(); !bytes.HasSuffix(got, want) {
		t.Fatal("the marshalled body is not the arena's bytes")
	}
	out.Free()
	testkit.WaitCollected(t, 5*time.Second, "the arena unmapped after gRPC freed the message", func() bool { return regions.Mapped() == 0 })
}

// marshalFromArena marshals a FlightData whose body is 64 KiB of a new
// arena of regions, kept by nothing but the message, and returns it with
// the body's bytes (a copy).
func marshalFromArena(t *testing.T, c *codec, regions *offheap.Pool) (mem.BufferSlice, []byte) {
	arena := offheap.NewIn(regions)
	body := arena.Alloc(64 << 10)
	for i := range body {
		body[i] = byte(i * 7)
	}
	small := arena.Alloc(8) // below gRPC's pooling threshold: copied
	out, err := c.Marshal(&sharedData{fd: &flight.FlightData{DataHeader: []byte{1}}, body: [][]byte{small, body}, n: len(body) + 8, keep: arena})
	if err != nil {
		t.Fatal(err)
	}
	return out, append(bytes.Clone(small), body...)
}
