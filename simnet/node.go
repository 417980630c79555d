package simnet

import (
	"context"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/wire"
)

// Node is one member of a Network; it implements service.Network.
type Node struct {
	net  *Network
	self member.Member
	h    Handler
	ctx  context.Context // the handlers' context: cancelled when the node is lost
	stop context.CancelFunc

	// Guarded by net.mu.
	lost bool
	subs map[*member.Queue]struct{}
	sh   StreamHandler // serves streamed requests; nil: none
}

// Self is this node.
func (n *Node) Self() member.Member { return n.self.Clone() }

// Members are the live members, sorted by name (this node too, unless it
// was lost).
func (n *Node) Members() []member.Member { return n.net.members() }

// result is what a delivery hands back to the waiting Request.
type result struct {
	f   wire.Frame
	err error
}

// plan is what Config.Rand decided for one request.
type plan struct {
	delay, dupDelay        time.Duration
	dropRequest, dropReply bool
	duplicate              bool
}

// Request sends one frame of type t to the member called to and returns its
// reply frame. The error is nil for an Ack; matches wire.ErrBusy or
// wire.ErrRefused (returned with the frame) for a Busy or Refused reply;
// ErrUnknownMember if to is not a live member; ErrClosed if this node was
// lost or the Network closed; ErrTransport if the request or its reply was
// lost or ctx ended first (the handler may or may not have run). payload
// is only read during the call: the destination gets a copy. See the
// package doc for which goroutine runs the handler.
func (n *Node) Request(ctx context.Context, to string, t wire.Type, payload []byte) (wire.Frame, error) {
	if to == n.self.Name {
		return n.requestSelf(t, payload)
	}
	dst, p, err := n.net.route(n, to, t)
	if err != nil {
		return wire.Frame{}, err
	}
	res := make(chan result, 1)
	req := wire.Frame{Type: t, Payload: clone(payload)}
	if !n.net.spawn(func() { res <- n.net.deliver(n, dst, req, p) }) {
		return wire.Frame{}, fmt.Errorf("%w: request %s to node %s", ErrClosed, t, to)
	}
	if p.duplicate {
		n.net.duplicate(n, dst, wire.Frame{Type: t, Payload: clone(payload)}, p.dupDelay)
	}
	select {
	case r := <-res:
		return r.f, r.err
	case <-ctx.Done():
		return wire.Frame{}, fmt.Errorf("%w: request %s to node %s: %w", ErrTransport, t, to, ctx.Err())
	}
}

// RequestPayload is Request of p's parts joined: the destination gets
// them as one payload, as it would read them from a stream.
func (n *Node) RequestPayload(ctx context.Context, to string, t wire.Type, p wire.Payload) (wire.Frame, error) {
	return n.Request(ctx, to, t, wire.Join(p.Parts))
}

// requestSelf calls this node's handler in place, as dht does.
func (n *Node) requestSelf(t wire.Type, payload []byte) (wire.Frame, error) {
	if !n.live() {
		return wire.Frame{}, fmt.Errorf("%w: request %s to itself (node %s)", ErrClosed, t, n.self.Name)
	}
	n.net.stats.requests.Add(1)
	rt, reply := n.h(n.ctx, n.Self(), wire.Frame{Type: t, Payload: payload})
	f := wire.Frame{Type: rt, Payload: reply}
	return f, replyError(f, t, n.self.Name)
}

func (n *Node) live() bool {
	n.net.mu.Lock()
	defer n.net.mu.Unlock()
	return !n.lost && !n.net.closed
}

// route checks that from may send to node to and draws the request's fate.
func (nw *Network) route(from *Node, to string, t wire.Type) (*Node, plan, error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed || from.lost {
		return nil, plan{}, fmt.Errorf("%w: request %s from node %s to %s", ErrClosed, t, from.self.Name, to)
	}
	dst, ok := nw.nodes[to]
	if !ok || dst.lost {
		return nil, plan{}, fmt.Errorf("%w: node %q (request %s)", ErrUnknownMember, to, t)
	}
	nw.stats.requests.Add(1)
	return dst, nw.drawLocked(from.self.Name, to, t), nil
}

// drawLocked decides one request's delays and faults; nw.mu is held.
func (nw *Network) drawLocked(from, to string, t wire.Type) plan {
	p := plan{delay: nw.jitterLocked(), dupDelay: nw.jitterLocked()}
	if nw.cfg.Faulty != nil && !nw.cfg.Faulty(from, to, t) {
		return p
	}
	p.dropRequest = nw.chanceLocked(nw.cfg.DropRequest)
	p.dropReply = nw.chanceLocked(nw.cfg.DropReply)
	p.duplicate = nw.chanceLocked(nw.cfg.Duplicate)
	return p
}

func (nw *Network) jitterLocked() time.Duration {
	if nw.cfg.MaxDelay <= 0 {
		return 0
	}
	return time.Duration(nw.rng.Int64N(int64(nw.cfg.MaxDelay)))
}

func (nw *Network) chanceLocked(p float64) bool { return p > 0 && nw.rng.Float64() < p }

// deliver runs on its own goroutine: wait, hand req to dst's handler, and
// bring the reply back, losing either as p says.
func (nw *Network) deliver(from, dst *Node, req wire.Frame, p plan) result {
	lost := func(why string) result {
		return result{err: fmt.Errorf("%w: request %s from node %s to %s: %s", ErrTransport, req.Type, from.self.Name, dst.self.Name, why)}
	}
	if !sleep(dst.ctx, p.delay) {
		return lost("destination lost")
	}
	if why := nw.broken(from, dst); why != "" {
		return lost(why)
	}
	if p.dropRequest {
		nw.stats.droppedRequests.Add(1)
		return lost("request dropped")
	}
	nw.stats.delivered.Add(1)
	rt, reply := dst.h(dst.ctx, from.Self(), req)
	if why := nw.broken(from, dst); why != "" {
		return lost(why + " before the reply")
	}
	if p.dropReply {
		nw.stats.droppedReplies.Add(1)
		return lost("reply dropped")
	}
	f := wire.Frame{Type: rt, Payload: clone(reply)}
	return result{f: f, err: replyError(f, req.Type, dst.self.Name)}
}

// duplicate delivers req to dst a second time after delay; its reply is
// thrown away.
func (nw *Network) duplicate(from, dst *Node, req wire.Frame, delay time.Duration) {
	nw.spawn(func() {
		if !sleep(dst.ctx, delay) || nw.broken(from, dst) != "" {
			return
		}
		nw.stats.duplicates.Add(1)
		dst.h(dst.ctx, from.Self(), req)
	})
}

// broken says why the link from -> dst is down, or "" if it is up.
func (nw *Network) broken(from, dst *Node) string {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	switch {
	case nw.closed:
		return "network closed"
	case dst.lost:
		return "destination lost"
	case from.lost:
		return "sender lost"
	case nw.cut[linkOf(from.self.Name, dst.self.Name)], nw.isolated[from.self.Name], nw.isolated[dst.self.Name]:
		nw.stats.cutOff.Add(1)
		return "link cut"
	}
	return ""
}

// replyError turns a Busy or Refused reply into its error.
func replyError(f wire.Frame, t wire.Type, to string) error {
	err := wire.ReplyError(f)
	if err == nil {
		return nil
	}
	return fmt.Errorf("simnet: request %s to node %s: %w", t, to, err)
}

// sleep waits d unless ctx ends first; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
