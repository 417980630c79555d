package flightproto

import (
	"math/bits"
	"sync"
)

// Buffer sizes the pool keeps: powers of two from 4 KiB to 256 MiB.
const (
	minPoolShift = 12
	maxPoolShift = 28
)

// PoolConfig configures a Pool. The zero value is the default.
type PoolConfig struct {
	// PoisonReleased makes the pool overwrite the buffer of a message
	// whose record was released before pooling it, so that a reader of the
	// message's bytes after the release reads garbage rather than, by luck,
	// the same bytes (the shuffles' checksums then catch it). It costs a
	// write of every released buffer: tests turn it on.
	PoisonReleased bool
}

// Pool is the message-buffer pool of a set of connections (the clients of
// Pool.DialAuth and the servers of Pool.ServerOptions): a message buffer
// released by one stream's reader serves the next message of any other,
// so a client with a connection per node reuses the same buffers. Its
// owner (a node's API server, a client) decides which connections share.
// The buffers it keeps are scratch space in sync.Pools: the garbage
// collector may drop them. Safe for concurrent use.
type Pool struct {
	bufs bufferPool
}

// NewPool returns an empty pool configured by cfg.
func NewPool(cfg PoolConfig) *Pool {
	return &Pool{bufs: bufferPool{poison: cfg.PoisonReleased}}
}

// bufferPool is a gRPC mem.BufferPool that does not zero the buffers it
// hands out. gRPC's default pool clears a whole buffer on every Get, which
// costs as much as the copy that follows for the large messages of a
// shuffle; every user of a pooled buffer in gRPC (frame reads, the codec's
// marshal, BufferSlice copies) writes its whole length before reading it.
// Safe for concurrent use.
type bufferPool struct {
	tiers [maxPoolShift + 1]sync.Pool
	// poison is PoolConfig.PoisonReleased.
	poison bool
}

// Get returns a buffer of length n.
func (p *bufferPool) Get(n int) *[]byte {
	shift := max(bits.Len(uint(n-1)), minPoolShift)
	if n <= 0 || shift > maxPoolShift {
		b := make([]byte, n)
		return &b
	}
	if b, ok := p.tiers[shift].Get().(*[]byte); ok {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n, 1<<shift)
	return &b
}

// Put returns a buffer that Get handed out (or a prefix of one).
func (p *bufferPool) Put(b *[]byte) {
	c := cap(*b)
	shift := bits.Len(uint(c)) - 1
	if c == 0 || c != 1<<shift || shift < minPoolShift || shift > maxPoolShift {
		return
	}
	p.tiers[shift].Put(b)
}

// putReleased returns the buffer of a message whose last reference was
// released (pooledData.release), overwriting it first if p poisons.
func (p *bufferPool) putReleased(b *[]byte) {
	if p.poison {
		full := (*b)[:cap(*b)]
		for i := range full {
			full[i] = 0xA5
		}
	}
	p.Put(b)
}
