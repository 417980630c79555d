package simnet

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/wire"
)

// StreamHandler serves one streamed request, as dht.StreamHandler does:
// send hands one data payload to the requester (read during the call), and
// the returned type and payload are the final reply.
type StreamHandler func(ctx context.Context, from member.Member, req wire.Frame, send func([]byte) error) (wire.Type, []byte)

// SetStreamHandler installs the node's server of streamed requests; until
// then they are refused.
func (n *Node) SetStreamHandler(h StreamHandler) {
	n.net.mu.Lock()
	defer n.net.mu.Unlock()
	n.sh = h
}

// Stream sends one request and hands recv every data payload of the
// streamed reply (a copy recv may keep), running the destination's handler
// on the caller's goroutine. A stream is one connection: it is neither
// delayed nor dropped nor duplicated by the Config's faults, but it fails
// with ErrTransport when its link is cut or either end is lost (checked
// before the request and before every frame), and ends with ctx. Errors are
// otherwise Request's, or recv's.
func (n *Node) Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error {
	dst, h, err := n.net.streamTo(n, to, t)
	if err != nil {
		return err
	}
	var stopped error // recv's error, or why the stream broke
	rt, reply := h(dst.ctx, n.Self(), wire.Frame{Type: t, Payload: clone(payload)}, func(b []byte) error {
		if stopped == nil {
			stopped = n.net.streamErr(ctx, n, dst, t)
		}
		if stopped == nil {
			stopped = recv(clone(b))
		}
		return stopped
	})
	if stopped != nil {
		return stopped
	}
	if err := n.net.streamErr(ctx, n, dst, t); err != nil {
		return err
	}
	return replyError(wire.Frame{Type: rt, Payload: reply}, t, to)
}

// streamTo finds the destination of a stream and its handler.
func (nw *Network) streamTo(from *Node, to string, t wire.Type) (*Node, StreamHandler, error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed || from.lost {
		return nil, nil, fmt.Errorf("%w: stream %s from node %s to %s", ErrClosed, t, from.self.Name, to)
	}
	dst, ok := nw.nodes[to]
	if !ok || dst.lost {
		return nil, nil, fmt.Errorf("%w: node %q (stream %s)", ErrUnknownMember, to, t)
	}
	if dst.sh == nil {
		return nil, nil, fmt.Errorf("%w: stream %s to node %s: no stream handler", ErrTransport, t, to)
	}
	nw.stats.requests.Add(1)
	return dst, dst.sh, nil
}

// streamErr is why a stream from from to dst can no longer carry frames,
// or nil.
func (nw *Network) streamErr(ctx context.Context, from, dst *Node, t wire.Type) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: stream %s to node %s: %w", ErrTransport, t, dst.self.Name, err)
	}
	if from == dst {
		return nil
	}
	if why := nw.broken(from, dst); why != "" {
		return fmt.Errorf("%w: stream %s from node %s to %s: %s", ErrTransport, t, from.self.Name, dst.self.Name, why)
	}
	return nil
}
