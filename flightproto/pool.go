package flightproto

import (
	"math/bits"
	"sync"
	"testing"
)

// Buffer sizes the pool keeps: powers of two from 4 KiB to 256 MiB.
const (
	minPoolShift = 12
	maxPoolShift = 28
)

// sharedPool is the pool of every connection of the process (Dial's
// clients and ServerOptions' servers): a message buffer released by one
// stream's reader serves the next message of any other, so a client with a
// connection per node, or nodes sharing a process, reuse each other's.
var sharedPool = new(bufferPool)

// bufferPool is a gRPC mem.BufferPool that does not zero the buffers it
// hands out. gRPC's default pool clears a whole buffer on every Get, which
// costs as much as the copy that follows for the large messages of a
// shuffle; every user of a pooled buffer in gRPC (frame reads, the codec's
// marshal, BufferSlice copies) writes its whole length before reading it.
// Safe for concurrent use.
type bufferPool struct {
	tiers [maxPoolShift + 1]sync.Pool
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

// poisonReleased makes putReleased overwrite a buffer before pooling it, so
// that a reader of a message's bytes after their record was released reads
// garbage rather than, by luck, the same bytes: on in test binaries, where
// the shuffles' checksums then catch it.
var poisonReleased = testing.Testing()

// putReleased returns the buffer of a message whose last reference was
// released (pooledData.release).
func (p *bufferPool) putReleased(b *[]byte) {
	if poisonReleased {
		full := (*b)[:cap(*b)]
		for i := range full {
			full[i] = 0xA5
		}
	}
	p.Put(b)
}
