package dht

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/wire"
)

// poolPair starts two local nodes serving h, with cfg applied to both.
func poolPair(t *testing.T, cfg func(*Config), h Handler) []*Node {
	t.Helper()
	base := DefaultConfig()
	base.Profile, base.Logger = ProfileLocal, slog.New(slog.DiscardHandler)
	if cfg != nil {
		cfg(&base)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := Start(ctx, 2, base, func(int) Handler { return h })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	})
	return nodes
}

// echoHandler acknowledges a request with its payload; "big" gets a
// reply of 2 MiB, "wait" waits for the node to close.
func echoHandler(ctx context.Context, _ Member, req wire.Frame) (wire.Type, []byte) {
	switch string(req.Payload) {
	case "big":
		return wire.TypeAck, make([]byte, 2<<20)
	case "wait":
		<-ctx.Done()
	}
	return wire.TypeAck, append([]byte(nil), req.Payload...)
}

// requestStreams counts the open PeerProtocol streams of from to to.
func requestStreams(from, to *Node) int {
	k := 0
	for _, c := range from.host.Network().ConnsToPeer(to.host.ID()) {
		for _, s := range c.GetStreams() {
			if s.Protocol() == PeerProtocol {
				k++
			}
		}
	}
	return k
}

func idleStreams(n *Node, name string) int {
	n.mu.Lock()
	p := n.pools[name]
	n.mu.Unlock()
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

func mustEcho(t *testing.T, n *Node, to, payload string) {
	t.Helper()
	f, err := n.Request(context.Background(), to, wire.TypeControl, []byte(payload))
	if err != nil || string(f.Payload) != payload {
		t.Fatalf("request %q: reply %q, %v", payload, f.Payload, err)
	}
}

// TestRequestsShareStreams: sequential requests use one stream; concurrent
// ones open more, and at most maxIdleStreams stay open afterwards.
func TestRequestsShareStreams(t *testing.T) {
	nodes := poolPair(t, nil, echoHandler)
	for range 20 {
		mustEcho(t, nodes[0], "node-1", "hi")
	}
	if got := requestStreams(nodes[0], nodes[1]); got != 1 {
		t.Fatalf("%d request streams after sequential requests, want 1", got)
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { mustEcho(t, nodes[0], "node-1", "par") })
	}
	wg.Wait()
	if got := requestStreams(nodes[0], nodes[1]); got > maxIdleStreams || got != idleStreams(nodes[0], "node-1") {
		t.Fatalf("%d request streams open, %d idle, want them equal and at most %d", got, idleStreams(nodes[0], "node-1"), maxIdleStreams)
	}
	if got := nodes[1].Stats().RequestsServed; got != 52 {
		t.Fatalf("served %d requests, want 52", got)
	}
}

// TestIdleStreamsClosed: a stream idle for RequestTimeout/2 is closed on
// both sides, and requests go on with a new one.
func TestIdleStreamsClosed(t *testing.T) {
	nodes := poolPair(t, func(c *Config) { c.RequestTimeout = 400 * time.Millisecond }, echoHandler)
	mustEcho(t, nodes[0], "node-1", "a")
	if got := idleStreams(nodes[0], "node-1"); got != 1 {
		t.Fatalf("%d idle streams, want 1", got)
	}
	testkit.WaitFor(t, 5*time.Second, "idle streams closed", func() bool {
		return idleStreams(nodes[0], "node-1") == 0 && requestStreams(nodes[0], nodes[1]) == 0 && requestStreams(nodes[1], nodes[0]) == 0
	})
	mustEcho(t, nodes[0], "node-1", "b")
}

// TestServeWaitsForNextRequest: the serving side keeps a stream idle
// between requests for longer than RequestTimeout.
func TestServeWaitsForNextRequest(t *testing.T) {
	const timeout = 300 * time.Millisecond
	nodes := poolPair(t, func(c *Config) { c.RequestTimeout = timeout }, echoHandler)
	s, err := nodes[0].host.NewStream(context.Background(), nodes[1].host.ID(), PeerProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 2 {
		if i > 0 {
			time.Sleep(timeout * 3 / 2)
		}
		if f, err := exchange(s, wire.TypeControl, wire.Payload{Parts: [][]byte{[]byte("x")}}, 1<<20); err != nil || string(f.Payload) != "x" {
			t.Fatalf("exchange %d: reply %q, %v", i, f.Payload, err)
		}
	}
}

// TestFailedStreamsNotReused: a stream whose reply was over the limit, or
// whose request was cancelled, is reset and dropped from the pool; the
// next request works.
func TestFailedStreamsNotReused(t *testing.T) {
	nodes := poolPair(t, func(c *Config) { c.MaxPayload = 1 << 20 }, echoHandler)
	mustEcho(t, nodes[0], "node-1", "warm")
	_, err := nodes[0].Request(context.Background(), "node-1", wire.TypeControl, []byte("big"))
	if !errors.Is(err, ErrTransport) || !errors.Is(err, wire.ErrTooLarge) {
		t.Fatalf("big reply: %v", err)
	}
	if got := idleStreams(nodes[0], "node-1"); got != 0 {
		t.Fatalf("%d idle streams after a failed exchange, want 0", got)
	}
	mustEcho(t, nodes[0], "node-1", "after big")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = nodes[0].Request(ctx, "node-1", wire.TypeControl, []byte("wait"))
	if !errors.Is(err, ErrTransport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled request: %v", err)
	}
	mustEcho(t, nodes[0], "node-1", "after cancel")
	if got := requestStreams(nodes[0], nodes[1]); got != 1 {
		t.Fatalf("%d request streams, want 1", got)
	}
}

// TestMemberGoneClosesStreams: when a member leaves, its pool and streams
// go.
func TestMemberGoneClosesStreams(t *testing.T) {
	nodes := poolPair(t, nil, echoHandler)
	mustEcho(t, nodes[0], "node-1", "hi")
	if err := nodes[1].Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "pool dropped", func() bool {
		nodes[0].mu.Lock()
		defer nodes[0].mu.Unlock()
		_, ok := nodes[0].pools["node-1"]
		return !ok
	})
	testkit.WaitFor(t, 5*time.Second, "streams closed", func() bool { return requestStreams(nodes[0], nodes[1]) == 0 })
}

// TestCloseWithPooledStreams: Close closes the pooled streams, and the
// peer stops serving them.
func TestCloseWithPooledStreams(t *testing.T) {
	nodes := poolPair(t, nil, echoHandler)
	mustEcho(t, nodes[0], "node-1", "hi")
	if err := nodes[0].Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 5*time.Second, "peer's streams closed", func() bool { return requestStreams(nodes[1], nodes[0]) == 0 })
	if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeControl, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("request after Close: %v", err)
	}
}
