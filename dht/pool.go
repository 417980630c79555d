package dht

import (
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
)

// maxIdleStreams bounds the idle request streams kept open to one member.
// More requests than that may run at once: each opens its own stream, and
// the streams that find the pool full when they finish are closed.
const maxIdleStreams = 8

// Idle request streams are closed after RequestTimeout/streamIdleDiv
// without use; the serving side waits up to RequestTimeout*serveIdleMul
// for the next request on a stream (serveOne), comfortably longer, so it
// never cuts a stream the sender may still take from its pool.
const (
	streamIdleDiv = 2
	serveIdleMul  = 2
)

// peerPool holds the idle request streams to one member, the most
// recently used last. A stream is taken for one request/reply exchange at
// a time and put back only after a clean one. Safe for concurrent use.
type peerPool struct {
	mu     sync.Mutex
	closed bool // the member left or the node closed
	idle   []idleStream
}

type idleStream struct {
	s     network.Stream
	since time.Time // when it went idle
}

// get takes the most recently used idle stream. It returns the streams it
// found unusable (idle since before oldest, or on a closed connection) for
// the caller to close.
func (p *peerPool) get(oldest time.Time) (s network.Stream, stale []network.Stream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		last := p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = idleStream{}
		p.idle = p.idle[:len(p.idle)-1]
		if last.since.After(oldest) && !last.s.Conn().IsClosed() {
			return last.s, stale
		}
		stale = append(stale, last.s)
	}
	return nil, stale
}

// put keeps s for a later request. It reports false (the caller closes s)
// if the pool is closed or full.
func (p *peerPool) put(s network.Stream, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= maxIdleStreams {
		return false
	}
	p.idle = append(p.idle, idleStream{s: s, since: now})
	return true
}

// expire removes and returns the streams idle since before oldest.
func (p *peerPool) expire(oldest time.Time) []network.Stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := 0
	for k < len(p.idle) && !p.idle[k].since.After(oldest) {
		k++
	}
	return p.takeLocked(k)
}

// close marks the pool closed and returns its idle streams: streams put
// back later are refused.
func (p *peerPool) close() []network.Stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return p.takeLocked(len(p.idle))
}

// takeLocked removes and returns the k oldest idle streams.
func (p *peerPool) takeLocked(k int) []network.Stream {
	out := make([]network.Stream, k)
	for i := range k {
		out[i] = p.idle[i].s
	}
	p.idle = append(p.idle[:0], p.idle[k:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	return out
}

// closeStreams closes streams gracefully: the peer reads the end of the
// stream and stops serving it.
func closeStreams(streams []network.Stream) {
	for _, s := range streams {
		_ = s.Close()
	}
}
