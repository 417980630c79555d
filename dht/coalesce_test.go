package dht

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ci "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

// countingConn counts the writes that reach the socket.
type countingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// secureTransport is what securePair builds each end with.
type secureTransport func(t *testing.T, key ci.PrivKey) sec.SecureTransport

func coalescing(t *testing.T, key ci.PrivKey) sec.SecureTransport {
	tr, err := newCoalescingTLS(libp2ptls.ID, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func plainTLS(t *testing.T, key ci.PrivKey) sec.SecureTransport {
	tr, err := libp2ptls.New(libp2ptls.ID, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// securePair connects a client (made by dial) and a server (made by
// accept) over loopback TCP and runs the handshake; the client's socket
// counts its writes.
func securePair(t *testing.T, dial, accept secureTransport) (client, server sec.SecureConn, raw *countingConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ckey, _, _ := ci.GenerateEd25519Key(rand.Reader)
	skey, _, _ := ci.GenerateEd25519Key(rand.Reader)
	sid, _ := peer.IDFromPrivateKey(skey)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		c   sec.SecureConn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		s, err := accept(t, skey).SecureInbound(ctx, c, "")
		done <- result{s, err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw = &countingConn{Conn: c}
	client, err = dial(t, ckey).SecureOutbound(ctx, raw, sid)
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("server handshake: %v", r.err)
	}
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c, raw
}

// message is writer w's seq-th message of n bytes: a header (length,
// writer, seq), then bytes derived from all three.
func message(w, seq byte, n int) []byte {
	m := make([]byte, 6+n)
	binary.BigEndian.PutUint32(m, uint32(n))
	m[4], m[5] = w, seq
	for i := range n {
		m[6+i] = byte(i) ^ w<<4 ^ seq
	}
	return m
}

// TestCoalescedWritesOnce: concurrent Writes of every size arrive whole, in
// each writer's order, and each Write of up to gatherMax bytes reaches the
// socket in one write (larger ones in one per gatherMax).
func TestCoalescedWritesOnce(t *testing.T) {
	client, server, raw := securePair(t, coalescing, coalescing)
	sizes := []int{0, 1, 12, 16 << 10, 64<<10 + 12, 300 << 10}
	const writers = 4
	got := make(chan error, 1)
	go func() { got <- readMessages(server, writers, len(sizes)) }()

	before := raw.writes.Load()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for seq, n := range sizes {
				if _, err := client.Write(message(byte(w), byte(seq), n)); err != nil {
					t.Errorf("writer %d message %d: %v", w, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, n := range sizes {
		want += int64(max(1, (n+gatherMax-1)/gatherMax)) // the records' overhead fits the last write's slack
	}
	if w := raw.writes.Load() - before; w != writers*want {
		t.Errorf("%d socket writes for %d Writes of %v bytes: want %d", w, writers*len(sizes), sizes, writers*want)
	}
}

// readMessages reads writers × per messages and checks each one's bytes
// and that every writer's arrive in order.
func readMessages(r io.Reader, writers, per int) error {
	next := make([]byte, writers)
	for range writers * per {
		var h [6]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return err
		}
		n, w, seq := int(binary.BigEndian.Uint32(h[:])), h[4], h[5]
		if int(w) >= writers || seq != next[w] {
			return errors.New("a message out of order or from an unknown writer")
		}
		next[w]++
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		if !bytes.Equal(body, message(w, seq, n)[6:]) {
			return errors.New("a message's bytes differ")
		}
	}
	return nil
}

// TestCoalescedInterop: a coalescing end and libp2p's plain TLS end talk
// both ways, in both roles: the wire is TLS's.
func TestCoalescedInterop(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server secureTransport
	}{{"coalescing client", coalescing, plainTLS}, {"coalescing server", plainTLS, coalescing}} {
		t.Run(tc.name, func(t *testing.T) {
			client, server, _ := securePair(t, tc.client, tc.server)
			sendOver(t, client, server, message(1, 2, 100<<10))
			sendOver(t, server, client, message(3, 4, 7))
		})
	}
}

// sendOver writes m on a and requires b to read exactly m.
func sendOver(t *testing.T, a, b net.Conn, m []byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := a.Write(m)
		errc <- err
	}()
	got := make([]byte, len(m))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, m) {
		t.Fatal("bytes differ")
	}
}

// TestCoalescedWriteError: when the socket fails, Write reports it with
// n = 0 (TLS had taken the bytes, the peer never got them), and so does
// every later Write.
func TestCoalescedWriteError(t *testing.T) {
	client, _, raw := securePair(t, coalescing, coalescing)
	raw.Conn.Close()
	for i := range 2 {
		n, err := client.Write(message(0, byte(i), 1000))
		if err == nil || n != 0 {
			t.Fatalf("Write %d on a closed socket: n %d, err %v; want 0 and an error", i, n, err)
		}
	}
}
