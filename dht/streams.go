package dht

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
)

// streamIdle is how long a request stream may stay idle in its pool.
func (n *Node) streamIdle() time.Duration { return n.cfg.RequestTimeout / streamIdleDiv }

// poolFor returns the stream pool of member e, or nil if e is no longer
// listed (as the same process) or the node is closed. The first pool
// starts the reaper of idle streams.
func (n *Node) poolFor(e memberEntry) *peerPool {
	n.mu.Lock()
	defer n.mu.Unlock()
	cur, ok := n.members[e.member.Name]
	if n.closed || !ok || cur.peer != e.peer || cur.boot != e.boot {
		return nil
	}
	if n.pools == nil {
		n.pools = map[string]*peerPool{}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			n.reapIdleStreams()
		}()
	}
	p, ok := n.pools[e.member.Name]
	if !ok {
		p = &peerPool{}
		n.pools[e.member.Name] = p
	}
	return p
}

// takeStream returns an idle stream to e from p (nil: none) or opens a new
// one. The dial skips libp2p's dial backoff: memberlist, not a failed
// dial, says whether a member is alive. A dial that failed while the
// cluster was forming (the peer not listening yet) would otherwise refuse
// every request to that member for seconds after it joined.
func (n *Node) takeStream(ctx context.Context, e memberEntry, p *peerPool) (network.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p != nil {
		s, stale := p.get(time.Now().Add(-n.streamIdle()))
		closeStreams(stale)
		if s != nil {
			return s, nil
		}
	}
	return n.memberStream(ctx, e.peer, PeerProtocol)
}

// memberStream opens a stream of protocol proto to a member's peer, past
// libp2p's dial backoff. A forced dial is not always enough: libp2p merges
// dials of one peer, and one that joins a dial started without force (the
// DHT's own) inherits that dial's backoff; two hosts that dial each other
// at once from their listening ports (TCP port reuse) can meet in one
// connection where both speak first, which TLS refuses; and under load the
// connection a dial made can close before the stream opens on it (libp2p's
// "connection failed"). A member memberlist lists is alive, so a stream
// that failed to open clears the peer's backoff and is tried again, up to
// memberStreamTries times, a little later each time.
func (n *Node) memberStream(ctx context.Context, p peer.ID, proto protocol.ID) (network.Stream, error) {
	ctx, done, ok := n.beginDial(network.WithForceDirectDial(ctx, "cluster member"))
	defer done()
	if !ok {
		return nil, fmt.Errorf("%w: stream to %s", ErrClosed, p)
	}
	for try := 1; ; try++ {
		s, err := n.host.NewStream(ctx, p, proto)
		if err == nil || ctx.Err() != nil || try == memberStreamTries {
			return s, err
		}
		if sw, ok := n.host.Network().(*swarm.Swarm); ok {
			sw.Backoff().Clear(p)
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(try) * memberStreamPause):
		}
	}
}

// memberStreamTries and memberStreamPause bound memberStream's tries: the
// k-th retry waits k pauses (15 ms in all for four tries).
const (
	memberStreamTries = 4
	memberStreamPause = 2500 * time.Microsecond
)

// releaseStream puts a stream whose exchange went cleanly back in p, or
// closes it if there is no room (or no pool).
func releaseStream(p *peerPool, s network.Stream) {
	if p == nil || !p.put(s, time.Now()) {
		_ = s.Close() // the reply is in: a close error changes nothing
	}
}

// reapIdleStreams closes the streams that stayed idle for streamIdle,
// until the node closes.
func (n *Node) reapIdleStreams() {
	t := time.NewTicker(max(n.streamIdle()/2, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case now := <-t.C:
			for _, p := range n.poolList() {
				closeStreams(p.expire(now.Add(-n.streamIdle())))
			}
		}
	}
}

func (n *Node) poolList() []*peerPool {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*peerPool, 0, len(n.pools))
	for _, p := range n.pools {
		out = append(out, p)
	}
	return out
}

// dropPoolLocked closes the stream pool of a member that is no longer
// listed; n.mu is held and the node is not closed. The streams close on a
// tracked goroutine: closing one may wait on its connection.
func (n *Node) dropPoolLocked(name string) {
	p, ok := n.pools[name]
	if !ok {
		return
	}
	delete(n.pools, name)
	if streams := p.close(); len(streams) > 0 {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			closeStreams(streams)
		}()
	}
}

// closePools closes every pool and its idle streams; the node is closed,
// so no pool is created again.
func (n *Node) closePools() {
	n.mu.Lock()
	pools := n.pools
	n.pools = nil
	n.mu.Unlock()
	for _, p := range pools {
		closeStreams(p.close())
	}
}
