package dht_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/wire"
)

// replyHandler answers by the request payload: "busy", "refuse", "die"
// (no reply), "big" (a reply over the sender's MaxPayload), anything else
// is acknowledged with "<node>:<from>:<payload>".
func replyHandler(i int) dht.Handler {
	return func(_ context.Context, from dht.Member, req wire.Frame) (wire.Type, []byte) {
		switch string(req.Payload) {
		case "busy":
			return wire.TypeBusy, wire.EncodeBusy(250 * time.Millisecond)
		case "refuse":
			return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseSealed, Reason: "shuffle s1 sealed"})
		case "big":
			return wire.TypeAck, make([]byte, 2<<20)
		}
		return wire.TypeAck, fmt.Appendf(nil, "node-%d:%s:%s:%s", i, from.Name, req.Type, req.Payload)
	}
}

func TestRequestReplies(t *testing.T) {
	nodes := dhttest.StartCluster(t, 3, func(_ int, c *dht.Config) { c.MaxPayload = 1 << 20 }, replyHandler)
	cases := []struct {
		name, to, payload string
		wantType          wire.Type
		wantReply         string
		check             func(error) bool
	}{
		{"ack", "node-1", "hi", wire.TypeAck, "node-1:node-0:control:hi", func(err error) bool { return err == nil }},
		{"ack from self", "node-0", "me", wire.TypeAck, "node-0:node-0:control:me", func(err error) bool { return err == nil }},
		{"busy", "node-2", "busy", wire.TypeBusy, "", func(err error) bool {
			d, ok := wire.RetryAfterOf(err)
			return errors.Is(err, dht.ErrBusy) && ok && d == 250*time.Millisecond
		}},
		{"busy from self", "node-0", "busy", wire.TypeBusy, "", func(err error) bool { return errors.Is(err, dht.ErrBusy) }},
		{"refused", "node-1", "refuse", wire.TypeRefused, "", func(err error) bool {
			code, ok := wire.RefusalCodeOf(err)
			return errors.Is(err, dht.ErrRefused) && ok && code == wire.RefuseSealed
		}},
		{"unknown member", "node-9", "hi", 0, "", func(err error) bool { return errors.Is(err, dht.ErrUnknownMember) }},
		{"reply over limit", "node-2", "big", 0, "", func(err error) bool {
			return errors.Is(err, dht.ErrTransport) && errors.Is(err, wire.ErrTooLarge)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := nodes[0].Request(context.Background(), tc.to, wire.TypeControl, []byte(tc.payload))
			if !tc.check(err) {
				t.Fatalf("err = %v", err)
			}
			if f.Type != tc.wantType || (tc.wantReply != "" && string(f.Payload) != tc.wantReply) {
				t.Fatalf("reply %s %q, want %s %q", f.Type, f.Payload, tc.wantType, tc.wantReply)
			}
		})
	}
	s := nodes[0].Stats()
	if s.Busy != 2 || s.Refused != 1 || s.RequestsFailed != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Per peer: each outcome is counted against the member it came from.
	for name, want := range map[string]dht.PeerStats{
		"node-0": {RequestsSent: 2, Busy: 1},
		"node-1": {RequestsSent: 2, Refused: 1, BytesSent: 2 + 6},
		"node-2": {RequestsSent: 1, Busy: 1, RequestsFailed: 1, BytesSent: 4},
	} {
		got := s.Peers[name]
		got.RequestsServed, got.BytesReceived = 0, 0 // self requests run the handler directly
		if got != want {
			t.Errorf("peer %s: %+v, want %+v", name, got, want)
		}
	}
}

func TestRequestContextCancelled(t *testing.T) {
	release := make(chan struct{})
	blocking := func(int) dht.Handler {
		return func(ctx context.Context, _ dht.Member, _ wire.Frame) (wire.Type, []byte) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return wire.TypeAck, nil
		}
	}
	nodes := dhttest.StartCluster(t, 2, nil, blocking)
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := nodes[0].Request(ctx, "node-1", wire.TypeShards, []byte("x"))
	if !errors.Is(err, dht.ErrTransport) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTransport and DeadlineExceeded", err)
	}
}

// TestManyConcurrentRequestsToOnePeer holds 200 requests open at once in the
// receiver's handler (none returns until all have arrived): the default
// resource manager would reset streams beyond ~75 per peer and protocol.
func TestManyConcurrentRequestsToOnePeer(t *testing.T) {
	const n = 200
	var arrived atomic.Int64
	all := make(chan struct{})
	barrier := func(int) dht.Handler {
		return func(ctx context.Context, _ dht.Member, req wire.Frame) (wire.Type, []byte) {
			if arrived.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return wire.TypeAck, bytes.Clone(req.Payload)
			case <-ctx.Done():
				return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseClosing})
			}
		}
	}
	nodes := dhttest.StartCluster(t, 2, nil, barrier)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Appendf(nil, "req-%d", i)
			f, err := nodes[0].Request(ctx, "node-1", wire.TypeShards, want)
			if err == nil && !bytes.Equal(f.Payload, want) {
				err = fmt.Errorf("reply %q to %q", f.Payload, want)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := nodes[1].Stats().RequestsServed; got != n {
		t.Fatalf("served %d requests, want %d", got, n)
	}
}

// TestInboundBytesBounded sends 12 requests of 100 KiB at once to a peer
// that reads at most 300 KiB of payloads at a time and holds each request
// in its handler: at most three are handled at once, the others wait and
// then get Busy replies (counted in BusySent), and once the handler lets
// go, every request goes through when sent again.
func TestInboundBytesBounded(t *testing.T) {
	const n, size, limit = 12, 100 << 10, 300 << 10
	var held, peak atomic.Int64
	release := make(chan struct{})
	holding := func(int) dht.Handler {
		return func(ctx context.Context, _ dht.Member, req wire.Frame) (wire.Type, []byte) {
			if len(req.Payload) != size {
				return wire.TypeAck, nil // the cluster's own probes
			}
			now := held.Add(int64(len(req.Payload)))
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			held.Add(-int64(len(req.Payload)))
			return wire.TypeAck, nil
		}
	}
	limitInbound := func(_ int, c *dht.Config) {
		c.MaxInboundBytes, c.RequestTimeout = limit, 2*time.Second // Busy after 0.5 s
	}
	nodes := dhttest.StartCluster(t, 2, limitInbound, holding)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := nodes[0].Request(ctx, "node-1", wire.TypeShards, make([]byte, size))
			errs <- err
		}()
	}
	busy := 0
	for range n - limit/size {
		if err := <-errs; !errors.Is(err, dht.ErrBusy) {
			t.Fatalf("a request over the inbound bound: %v, want ErrBusy", err)
		}
		busy++
	}
	close(release)
	for range limit / size {
		if err := <-errs; err != nil {
			t.Fatalf("an admitted request: %v", err)
		}
	}
	if p := peak.Load(); p > limit {
		t.Errorf("handlers held %d payload bytes at once, bound %d", p, limit)
	}
	if got := nodes[1].Stats().BusySent; got != uint64(busy) {
		t.Errorf("BusySent = %d, want %d", got, busy)
	}
	for range busy { // sent again, now that the handler lets go
		if _, err := nodes[0].Request(ctx, "node-1", wire.TypeShards, make([]byte, size)); err != nil {
			t.Fatalf("request sent again: %v", err)
		}
	}
}
