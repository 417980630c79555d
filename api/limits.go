package api

import (
	"net"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// Limits bound what callers may hold open on a node's API, whoever they
// are: connections, streams per connection, and how long a connection may
// sit idle or take to start. The zero value means the defaults below.
type Limits struct {
	// MaxConnections is how many connections the node serves at once; a
	// further one waits (unaccepted, in the listen queue) until one closes.
	// Default DefaultMaxConnections.
	MaxConnections int
	// MaxStreams is how many calls one connection may run at once
	// (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS: gRPC clients queue the
	// rest). Default DefaultMaxStreams.
	MaxStreams uint32
	// IdleTimeout closes a connection without calls for this long (a
	// GOAWAY: clients reconnect when they next call). Default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds a new connection's TLS and HTTP/2 start.
	// Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxCallMessage is the largest message, in bytes, of every method
	// but DoPut and DoExchange (which take record batches up to
	// flightproto.MaxMessageBytes): a larger one is refused unread
	// (msglimit.go). Default DefaultMaxCallMessage; at most
	// flightproto.MaxMessageBytes.
	MaxCallMessage int
}

// The defaults of Limits.
const (
	DefaultMaxConnections   = 1024
	DefaultMaxStreams       = 256
	DefaultIdleTimeout      = 10 * time.Minute
	DefaultHandshakeTimeout = 10 * time.Second
	// keepaliveTime is how long a connection may be silent before the node
	// pings it, and keepaliveTimeout how long it waits for the answer
	// before closing the connection (a peer gone without a FIN).
	keepaliveTime    = time.Minute
	keepaliveTimeout = 20 * time.Second
	// minClientPing is the shortest interval between a client's keepalive
	// pings that the node accepts (more often: the connection is closed).
	minClientPing = 10 * time.Second
)

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.MaxStreams == 0 {
		l.MaxStreams = DefaultMaxStreams
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.HandshakeTimeout <= 0 {
		l.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if l.MaxCallMessage <= 0 {
		l.MaxCallMessage = DefaultMaxCallMessage
	}
	l.MaxCallMessage = min(l.MaxCallMessage, flightproto.MaxMessageBytes)
	return l
}

// serverOptions are the gRPC options that enforce l.
func (l Limits) serverOptions() []grpc.ServerOption {
	l = l.withDefaults()
	return []grpc.ServerOption{
		grpc.MaxConcurrentStreams(l.MaxStreams),
		grpc.ConnectionTimeout(l.HandshakeTimeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: l.IdleTimeout,
			Time: keepaliveTime, Timeout: keepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: minClientPing, PermitWithoutStream: true}),
	}
}

// limitListener accepts at most n connections at once: Accept waits while
// n are open.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func newLimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n)}
}

// Accept waits for a free slot, then for a connection, which gives the
// slot back when it closes.
func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: sync.OnceFunc(func() { <-l.slots })}, nil
}

// slotConn frees its listener's slot once, at its first Close.
type slotConn struct {
	net.Conn
	free func()
}

func (c *slotConn) Close() error {
	defer c.free()
	return c.Conn.Close()
}
