package flightproto

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"
)

// MaxMessageBytes is the gRPC message limit on both sides (the default 4 MiB
// breaks larger batches).
const MaxMessageBytes = 256 << 20

// A connection's socket buffers on both sides. gRPC's default of 32 KiB
// makes a syscall per 32 KiB of a batch. The write buffer is shared: a
// connection holds it only while it has data to flush, so that idle
// connections cost little.
const (
	writeBufferBytes = 256 << 10
	readBufferBytes  = 64 << 10
)

// Dial connects a Flight client to a node's API address (host:port) with
// the message limits shufflenode needs, larger socket buffers, and a codec
// and buffer pool that copy and clear less than gRPC's own (see codec).
// Close the client when done. It connects in plaintext without a token:
// DialAuth connects to a node that requires TLS or a token. The client has
// a buffer pool of its own: Pool.DialAuth shares one among connections.
func Dial(addr string) (flight.Client, error) { return DialAuth(addr, ClientAuth{}) }

// DialAuth is Dial with a's TLS settings and token. An error in a (a file
// that cannot be read) wraps ErrAuthConfig.
func DialAuth(addr string, a ClientAuth) (flight.Client, error) {
	return NewPool(PoolConfig{}).DialAuth(addr, a)
}

// DialAuth is the package's DialAuth with message buffers from p.
func (p *Pool) DialAuth(addr string, a ClientAuth) (flight.Client, error) {
	opts, err := a.dialOptions()
	if err != nil {
		return nil, err
	}
	pool := &p.bufs
	return flight.NewClientWithMiddleware(addr, nil, nil, append(opts,
		experimental.WithBufferPool(pool),
		grpc.WithWriteBufferSize(writeBufferBytes), grpc.WithSharedWriteBuffer(true), grpc.WithReadBufferSize(readBufferBytes),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes),
			grpc.ForceCodecV2(newCodec(pool))))...)
}

// ServerOptions are the gRPC options of a Flight server that Dial's
// clients talk to: the same message limits, buffers and codec, and a
// buffer pool of the server's own (Pool.ServerOptions shares one).
func ServerOptions() []grpc.ServerOption { return NewPool(PoolConfig{}).ServerOptions() }

// ServerOptions is the package's ServerOptions with message buffers from p.
func (p *Pool) ServerOptions() []grpc.ServerOption {
	pool := &p.bufs
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		experimental.BufferPool(pool), grpc.ForceServerCodecV2(newCodec(pool)),
		grpc.WriteBufferSize(writeBufferBytes), grpc.SharedWriteBuffer(true), grpc.ReadBufferSize(readBufferBytes),
	}
}
