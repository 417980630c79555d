package dht_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/wire"
)

// streamHandler streams back as many data frames as the request asks for
// ("refuse" is refused after one frame), each naming its number.
func streamHandler(_ context.Context, _ dht.Member, req wire.Frame, send func([]byte) error) (wire.Type, []byte) {
	if string(req.Payload) == "refuse" {
		_ = send([]byte("0"))
		return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseUnknownShuffle, Reason: "no such shuffle"})
	}
	n, _ := strconv.Atoi(string(req.Payload))
	for i := range n {
		if err := send(fmt.Appendf(nil, "%d", i)); err != nil {
			return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseFailed, Reason: err.Error()})
		}
	}
	return wire.TypeAck, nil
}

// TestStream: a streamed reply arrives whole and in order, from a peer and
// from this node itself; a refusal after some data is the request's error;
// a recv error stops the stream and is returned.
func TestStream(t *testing.T) {
	nodes := dhttest.StartCluster(t, 2, nil, replyHandler)
	for _, n := range nodes {
		n.SetStreamHandler(streamHandler)
	}
	ctx := context.Background()
	for _, to := range []string{"node-1", "node-0"} {
		var got []string
		err := nodes[0].Stream(ctx, to, wire.TypeRead, []byte("300"), func(b []byte) error {
			got = append(got, string(b))
			return nil
		})
		if err != nil || len(got) != 300 || got[0] != "0" || got[299] != "299" {
			t.Fatalf("stream from %s: %d frames, %v", to, len(got), err)
		}
	}
	err := nodes[0].Stream(ctx, "node-1", wire.TypeRead, []byte("refuse"), func([]byte) error { return nil })
	if code, ok := wire.RefusalCodeOf(err); !errors.Is(err, dht.ErrRefused) || !ok || code != wire.RefuseUnknownShuffle {
		t.Fatalf("refused stream: %v", err)
	}
	stop := errors.New("enough")
	err = nodes[0].Stream(ctx, "node-1", wire.TypeRead, []byte("1000"), func([]byte) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("stream stopped by recv: %v, want its error", err)
	}
	if err := nodes[0].Stream(ctx, "node-9", wire.TypeRead, []byte("1"), nil); !errors.Is(err, dht.ErrUnknownMember) {
		t.Fatalf("stream to a stranger: %v", err)
	}
}
