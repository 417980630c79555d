package dht

import (
	"context"
	"net"
	"sync"

	ci "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
)

// Why coalesce: crypto/tls writes every record of at most 16 KiB with its
// own write to the socket, so each 64 KiB yamux frame became five writes
// (four full records and one of the frame's 12-byte header's remainder),
// each a pass through the TCP stack of both ends. Gathering the records of
// one Write of the secured connection into one socket write moves the same
// bytes with a quarter of the system calls: on loopback, 400 MiB of 64 KiB
// frames took 0.38-0.39 CPU s instead of 0.53-0.60 (2026-11-24, commit 363bd5c,
// crypto/tls alone; BenchmarkBulk measures the libp2p path).

// coalescingTLS is libp2p's TLS 1.3 security transport whose connections
// write each Write's records to the socket at once (coalescedConn). The
// handshake and the bytes on the wire are exactly TLS's: a peer without
// this wrapper cannot tell.
type coalescingTLS struct {
	inner *libp2ptls.Transport
}

var _ sec.SecureTransport = (*coalescingTLS)(nil)

// newCoalescingTLS is the libp2p.Security constructor of coalescingTLS.
func newCoalescingTLS(id protocol.ID, key ci.PrivKey, muxers []tptu.StreamMuxer) (*coalescingTLS, error) {
	inner, err := libp2ptls.New(id, key, muxers)
	if err != nil {
		return nil, err
	}
	return &coalescingTLS{inner: inner}, nil
}

// SecureInbound runs the handshake as a server on a gathering connection,
// which passes the handshake's writes straight through.
func (t *coalescingTLS) SecureInbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	g := &gatherConn{Conn: insecure}
	c, err := t.inner.SecureInbound(ctx, g, p)
	return wrapCoalesced(c, g, err)
}

// SecureOutbound runs the handshake as a client (see SecureInbound).
func (t *coalescingTLS) SecureOutbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	g := &gatherConn{Conn: insecure}
	c, err := t.inner.SecureOutbound(ctx, g, p)
	return wrapCoalesced(c, g, err)
}

// ID is the protocol ID of libp2p's TLS.
func (t *coalescingTLS) ID() protocol.ID { return t.inner.ID() }

func wrapCoalesced(c sec.SecureConn, g *gatherConn, err error) (sec.SecureConn, error) {
	if err != nil {
		return nil, err
	}
	return &coalescedConn{SecureConn: c, under: g}, nil
}

// coalescedConn is a secured connection whose Write gathers the TLS records
// it makes in its gatherConn and writes them to the socket in one write
// (several for a Write of more than gatherMax bytes).
type coalescedConn struct {
	sec.SecureConn
	under *gatherConn
	mu    sync.Mutex // one Write at a time, so its records stay together
}

// Write encrypts p and sends its records; it reports an error, and n = 0,
// when the socket write fails, even though TLS had accepted p.
func (c *coalescedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.under.gather()
	n, err := c.SecureConn.Write(p)
	if ferr := c.under.release(); err == nil && ferr != nil {
		return 0, ferr
	}
	return n, err
}

// gatherMax is the most a gatherConn holds before it writes: a 64 KiB yamux
// frame's records (with their overhead) fit, and a larger Write is sent
// in pieces of about this size.
const gatherMax = 256 << 10

// gatherConn is the socket under TLS. Between gather and release it keeps
// what TLS writes and writes it at release (or when gatherMax is reached);
// otherwise (the handshake, alerts, anything TLS writes on its own) it
// writes through. Writes keep their order either way.
type gatherConn struct {
	net.Conn
	mu       sync.Mutex
	gathered bool
	buf      *[]byte // from gatherPool while gathering, else nil
	err      error   // the first failed write: every later write fails too
}

// gather starts keeping writes.
func (g *gatherConn) gather() {
	g.mu.Lock()
	g.gathered = true
	g.mu.Unlock()
}

// release writes what was kept and stops keeping writes.
func (g *gatherConn) release() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gathered = false
	return g.flushLocked()
}

// Write keeps p while gathering, else writes it.
func (g *gatherConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return 0, g.err
	}
	if !g.gathered {
		n, err := g.Conn.Write(p)
		g.err = err
		return n, err
	}
	if g.buf == nil {
		g.buf = gatherPool.Get().(*[]byte)
	}
	*g.buf = append(*g.buf, p...)
	if len(*g.buf) >= gatherMax {
		if err := g.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flushLocked writes the kept bytes and returns the buffer to gatherPool
// (an idle connection holds none).
func (g *gatherConn) flushLocked() error {
	if g.buf == nil {
		return g.err
	}
	if g.err == nil {
		_, g.err = g.Conn.Write(*g.buf)
	}
	if cap(*g.buf) <= 2*gatherMax {
		*g.buf = (*g.buf)[:0]
		gatherPool.Put(g.buf)
	}
	g.buf = nil
	return g.err
}

// gatherPool holds the buffers of gatherConns between Writes.
var gatherPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 80<<10)
	return &b
}}
