package dht

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/shufflenode/shufflenode/wire"
)

// benchProtocol is a sink/echo protocol registered only by benchmarks.
const benchProtocol = "/shufflenode/bench/1"

// benchPair starts two local nodes; node 1 acknowledges every request with
// an empty Ack and serves benchProtocol with serve.
func benchPair(b *testing.B, serve func(io.ReadWriter), networkKey []byte) []*Node {
	b.Helper()
	nodes := ackPair(b, networkKey)
	nodes[1].host.SetStreamHandler(benchProtocol, func(s network.Stream) {
		defer s.Close()
		serve(s)
	})
	return nodes
}

// ackPair starts two local nodes that acknowledge every request with an
// empty Ack, closed when tb ends.
func ackPair(tb testing.TB, networkKey []byte) []*Node {
	tb.Helper()
	base := DefaultConfig()
	base.Profile, base.Logger, base.NetworkKey = ProfileLocal, slog.New(slog.DiscardHandler), networkKey
	ack := func(int) Handler {
		return func(context.Context, Member, wire.Frame) (wire.Type, []byte) { return wire.TypeAck, nil }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes, err := Start(ctx, 2, base, ack)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	})
	return nodes
}

// sink reads frames until EOF and then writes the number it read.
func sink(rw io.ReadWriter) {
	var n uint64
	for {
		if _, err := wire.ReadFrame(rw, 2<<20); err != nil {
			break
		}
		n++
	}
	_, _ = rw.Write(binary.BigEndian.AppendUint64(nil, n))
}

// echo answers every frame with an Ack frame carrying the same payload.
func echo(rw io.ReadWriter) {
	for {
		f, err := wire.ReadFrame(rw, 2<<20)
		if err != nil {
			return
		}
		if wire.WriteFrame(rw, wire.TypeAck, f.Payload) != nil {
			return
		}
	}
}

// halfCloser is a stream or TCP connection that can close its write side.
type halfCloser interface {
	io.ReadWriter
	CloseWrite() error
}

// tcpPair returns the client side of a loopback TCP connection whose
// server side runs serve.
func tcpPair(b *testing.B, serve func(io.ReadWriter)) *net.TCPConn {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

func libp2pStream(b *testing.B, serve func(io.ReadWriter), networkKey []byte) network.Stream {
	b.Helper()
	nodes := benchPair(b, serve, networkKey)
	s, err := nodes[0].host.NewStream(context.Background(), nodes[1].host.ID(), benchProtocol)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Reset() })
	return s
}

// BenchmarkBulk sends 1 MiB frames one way over one connection: plain
// loopback TCP, one libp2p stream (TLS + yamux), the same with a
// private-network key, and Request (an Ack per frame), sequential and from
// 8 goroutines at once.
func BenchmarkBulk(b *testing.B) {
	payload := make([]byte, 1<<20)
	b.Run("tcp", func(b *testing.B) { bulk(b, tcpPair(b, sink), payload) })
	b.Run("libp2p-stream", func(b *testing.B) { bulk(b, libp2pStream(b, sink, nil), payload) })
	b.Run("libp2p-stream-psk", func(b *testing.B) { bulk(b, libp2pStream(b, sink, make([]byte, 32)), payload) })
	b.Run("request", func(b *testing.B) {
		nodes := benchPair(b, sink, nil)
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeShards, payload); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b, "frames/s")
	})
	b.Run("request-parallel", func(b *testing.B) {
		nodes := benchPair(b, sink, nil)
		b.SetBytes(int64(len(payload)))
		concurrentRequests(b, nodes[0], 8, wire.TypeShards, payload)
	})
}

// concurrentRequests sends b.N requests to node-1 from workers goroutines
// at once.
func concurrentRequests(b *testing.B, from *Node, workers int, t wire.Type, payload []byte) {
	b.ReportAllocs()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for range workers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if _, err := from.Request(context.Background(), "node-1", t, payload); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	reportRate(b, "frames/s")
}

func bulk(b *testing.B, c halfCloser, payload []byte) {
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if err := wire.WriteFrame(c, wire.TypeShards, payload); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := c.CloseWrite(); err != nil {
		b.Fatal(err)
	}
	var got [8]byte
	if _, err := io.ReadFull(c, got[:]); err != nil || binary.BigEndian.Uint64(got[:]) != uint64(n) {
		b.Fatalf("receiver got %d frames of %d: %v", binary.BigEndian.Uint64(got[:]), n, err)
	}
	reportRate(b, "frames/s")
}

// BenchmarkSmall measures 64 B request/reply round trips: ping-pong on one
// TCP connection, on one libp2p stream, and through Request (sequential,
// and from parallel goroutines).
func BenchmarkSmall(b *testing.B) {
	payload := make([]byte, 64)
	b.Run("tcp", func(b *testing.B) { pingPong(b, tcpPair(b, echo), payload) })
	b.Run("libp2p-stream", func(b *testing.B) { pingPong(b, libp2pStream(b, echo, nil), payload) })
	b.Run("request", func(b *testing.B) {
		nodes := benchPair(b, echo, nil)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeControl, payload); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b, "frames/s")
	})
	b.Run("request-parallel", func(b *testing.B) {
		nodes := benchPair(b, echo, nil)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeControl, payload); err != nil {
					b.Error(err)
					return
				}
			}
		})
		reportRate(b, "frames/s")
	})
}

func pingPong(b *testing.B, c io.ReadWriter, payload []byte) {
	r := bufio.NewReader(c)
	b.ReportAllocs()
	for b.Loop() {
		if err := wire.WriteFrame(c, wire.TypeControl, payload); err != nil {
			b.Fatal(err)
		}
		if _, err := wire.ReadFrame(r, 1<<10); err != nil && !errors.Is(err, io.EOF) {
			b.Fatal(err)
		}
	}
	reportRate(b, "frames/s")
}

// reportRate reports b.N per second of the timed part under unit.
func reportRate(b *testing.B, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, unit)
	}
}
