package dht

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/shufflenode/shufflenode/wire"
)

// Request sends one frame of type t to the member called to and returns its
// reply frame. It writes the frame on a libp2p stream (PeerProtocol) and
// reads exactly one reply. Streams are kept open per member and carry one
// exchange at a time: a request takes an idle stream or opens one; after a
// clean exchange the stream goes back to the pool (up to maxIdleStreams
// per member, closed after RequestTimeout/2 idle, or when the member goes
// or the node closes); a stream that failed is reset and never reused. The
// error is:
//   - nil for a TypeAck reply;
//   - a *wire.BusyError (matches ErrBusy) or *wire.Refusal (matches
//     ErrRefused) for a Busy or Refused reply, returned with the frame;
//   - ErrUnknownMember if to is not a live member;
//   - ErrTransport (with the cause) if the stream failed: the peer may or
//     may not have handled the request;
//   - wire.ErrUnexpectedReply or wire.ErrMalformed for a reply the peer
//     should not have sent.
//
// Errors name the member. A request to this node (to == Self().Name) calls
// the handler directly, passing it payload, which the handler may keep or
// recycle: the caller must not use payload after the call. A ctx without a
// deadline gets Config.RequestTimeout.
func (n *Node) Request(ctx context.Context, to string, t wire.Type, payload []byte) (wire.Frame, error) {
	return n.RequestParts(ctx, to, t, [][]byte{payload})
}

// RequestParts is Request with the payload in parts, written to the stream
// in place (wire.WriteFrameParts) rather than joined first. A request to
// this node hands its handler the only part as it is, or joins several into
// a pooled payload buffer (wire.JoinPayload); either way the handler owns
// it as it owns one read from a stream (it may keep or recycle it), so the
// caller must not use the parts after the call. The parts must not change
// during the call.
func (n *Node) RequestParts(ctx context.Context, to string, t wire.Type, parts [][]byte) (wire.Frame, error) {
	return n.RequestPayload(ctx, to, t, wire.Payload{Parts: parts})
}

// RequestPayload is RequestParts of p's parts, the frame's CRC combined
// from the CRCs p knows (wire.WriteFramePayload).
func (n *Node) RequestPayload(ctx context.Context, to string, t wire.Type, p wire.Payload) (wire.Frame, error) {
	if n.isClosed() {
		return wire.Frame{}, fmt.Errorf("%w: request %s to node %s", ErrClosed, t, to)
	}
	if to == n.cfg.Name {
		return n.requestSelf(ctx, t, selfPayload(p.Parts))
	}
	e, ok := n.lookup(to)
	if !ok {
		return wire.Frame{}, fmt.Errorf("%w: node %q (request %s)", ErrUnknownMember, to, t)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, n.cfg.RequestTimeout)
		defer cancel()
	}
	f, err := n.roundTrip(ctx, e, t, p)
	if err != nil {
		n.stats.add(to, func(c *peerCounters) { c.requestsFailed.Add(1) })
		return wire.Frame{}, fmt.Errorf("%w: request %s to node %s: %w", ErrTransport, t, to, err)
	}
	return f, n.replyError(f, t, to)
}

// selfPayload is the payload a request to this node hands its handler: the
// only part, or the parts joined into a pooled buffer.
func selfPayload(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	return wire.JoinPayload(parts)
}

// requestSelf runs the handler in place of a network round trip; the reply
// frame's payload is the handler's slice, not a copy.
func (n *Node) requestSelf(ctx context.Context, t wire.Type, payload []byte) (wire.Frame, error) {
	rt, reply := n.handler(ctx, n.Self(), wire.Frame{Type: t, Payload: payload})
	f := wire.Frame{Type: rt, Payload: reply}
	n.stats.add(n.cfg.Name, func(c *peerCounters) { c.requestsSent.Add(1) })
	return f, n.replyError(f, t, n.cfg.Name)
}

func (n *Node) replyError(f wire.Frame, t wire.Type, to string) error {
	err := wire.ReplyError(f)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrBusy):
		n.stats.add(to, func(c *peerCounters) { c.busy.Add(1) })
	case errors.Is(err, wire.ErrRefused):
		n.stats.add(to, func(c *peerCounters) { c.refused.Add(1) })
	}
	return fmt.Errorf("dht: request %s to node %s: %w", t, to, err)
}

// roundTrip writes one frame on a pooled or new stream to e and reads one
// reply.
func (n *Node) roundTrip(ctx context.Context, e memberEntry, t wire.Type, payload wire.Payload) (wire.Frame, error) {
	p := n.poolFor(e)
	s, err := n.takeStream(ctx, e, p)
	if err != nil {
		return wire.Frame{}, err
	}
	f, reusable, err := n.exchangeCtx(ctx, s, t, payload)
	if err != nil {
		return wire.Frame{}, err
	}
	size := payload.Len()
	n.stats.add(e.member.Name, func(c *peerCounters) {
		c.requestsSent.Add(1)
		c.bytesSent.Add(uint64(size))
	})
	if reusable {
		releaseStream(p, s)
	}
	return f, nil
}

// exchangeCtx runs exchange on s, resetting s if ctx ends first or the
// exchange fails. It reports whether s is still usable: not reset, and
// its reply read to the end.
func (n *Node) exchangeCtx(ctx context.Context, s network.Stream, t wire.Type, payload wire.Payload) (f wire.Frame, reusable bool, err error) {
	// ctx's end resets the stream, which fails the pending read or write;
	// by then ctx.Err() is set and joins the error.
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	f, err = exchange(s, t, payload, n.cfg.MaxPayload)
	stopped := stop() // false: the reset ran or is running
	if err != nil {
		_ = s.Reset()
		return wire.Frame{}, false, errors.Join(err, ctx.Err())
	}
	return f, stopped, nil
}

// exchange writes the request and reads the reply.
func exchange(s network.Stream, t wire.Type, payload wire.Payload, maxPayload int) (wire.Frame, error) {
	if err := writeFrame(s, t, payload); err != nil {
		return wire.Frame{}, err
	}
	f, err := wire.ReadFrame(s, maxPayload)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the peer closed without a reply
	}
	return f, err
}

// writeFrame writes one frame of payload.
func writeFrame(s network.Stream, t wire.Type, payload wire.Payload) error {
	if len(payload.Parts) == 1 && len(payload.Known) == 0 {
		return wire.WriteFrame(s, t, payload.Parts[0])
	}
	return wire.WriteFramePayload(s, t, payload)
}

// serveStream answers the request frames of one inbound stream, one reply
// per frame, until the sender closes it. It runs on libp2p's goroutine
// for the stream; Close waits for it.
func (n *Node) serveStream(s network.Stream) {
	if !n.trackStream() {
		_ = s.Reset()
		return
	}
	defer n.wg.Done()
	for n.serveOne(s) {
	}
}

// serveOne handles one frame; it reports whether to read another. The
// sender is looked up for every frame: a stream opened before the sender
// was a known member lives on after it is one.
func (n *Node) serveOne(s network.Stream) bool {
	h, err := n.readRequestHeader(s)
	from := n.memberByPeer(s.Conn().RemotePeer())
	if errors.Is(err, errIdleClosed) {
		n.log.Debug("request stream ended", "peer", peerLabel(from), "err", err)
		_ = s.Close()
		return false
	}
	if err != nil {
		n.log.Warn("bad request stream", "peer", peerLabel(from), "err", err)
		_ = s.Reset()
		return false
	}
	release, ok := n.admit(h.Len)
	if !ok {
		return n.replyBusy(s, h, from)
	}
	defer release()
	req, err := h.ReadPayloadReserved(s) // admitted: allocated whole, then the handler's
	if err != nil {
		n.log.Warn("bad request stream", "peer", peerLabel(from), "err", err)
		_ = s.Reset()
		return false
	}
	n.stats.add(from.Name, func(c *peerCounters) {
		c.requestsServed.Add(1)
		c.bytesReceived.Add(uint64(len(req.Payload)))
	})
	rt, reply := n.handler(n.ctx, from, req)
	_ = s.SetWriteDeadline(time.Now().Add(n.cfg.RequestTimeout))
	if err := wire.WriteFrame(s, rt, reply); err != nil {
		n.log.Debug("cannot write reply", "peer", peerLabel(from), "err", err)
		_ = s.Reset()
		return false
	}
	return true
}

// errIdleClosed marks a stream that ended between requests: not an error
// of the peer's.
var errIdleClosed = errors.New("dht: stream ended between requests")

// readRequestHeader waits up to RequestTimeout*serveIdleMul for the next
// request to start (the sender keeps idle streams open), then gives the
// request RequestTimeout to arrive, be admitted and be read.
func (n *Node) readRequestHeader(s network.Stream) (wire.Header, error) {
	var first [1]byte
	_ = s.SetReadDeadline(time.Now().Add(n.cfg.RequestTimeout * serveIdleMul))
	if _, err := io.ReadFull(s, first[:]); err != nil {
		// Between requests: an idle stream closed, reset or timed out
		// (a pooled stream when its sender or its connection goes).
		return wire.Header{}, fmt.Errorf("%w: %w", errIdleClosed, err)
	}
	_ = s.SetReadDeadline(time.Now().Add(n.cfg.RequestTimeout))
	return wire.ReadHeader(io.MultiReader(bytes.NewReader(first[:]), s), n.cfg.MaxPayload)
}

// admitWait bounds, as a share of RequestTimeout, how long a request waits
// for inbound bytes before it gets a Busy reply.
const admitWait = 4

// admitRetry is the retry-after of a Busy reply for want of inbound bytes.
const admitRetry = 50 * time.Millisecond

// smallRequest is the payload size up to which a request is admitted at
// once: control messages must not wait behind bulk data.
const smallRequest = 64 << 10

// admit reserves n inbound payload bytes (at most MaxInboundBytes, so a
// larger request is read alone), waiting up to RequestTimeout/admitWait.
// It returns the release, or false if the bytes did not free up in time.
// Small requests need no reservation.
func (n *Node) admit(size int) (release func(), ok bool) {
	if size <= smallRequest {
		return func() {}, true
	}
	w := min(int64(size), n.cfg.MaxInboundBytes)
	if !n.inbound.TryAcquire(w) {
		ctx, cancel := context.WithTimeout(n.ctx, n.cfg.RequestTimeout/admitWait)
		err := n.inbound.Acquire(ctx, w)
		cancel()
		if err != nil {
			return nil, false
		}
	}
	return func() { n.inbound.Release(w) }, true
}

// replyBusy skips the payload of a request that was not admitted and tells
// the sender to send it again later. It reports whether to read another
// request from the stream.
func (n *Node) replyBusy(s network.Stream, h wire.Header, from Member) bool {
	n.stats.add(from.Name, func(c *peerCounters) { c.busySent.Add(1) })
	if err := h.SkipPayload(s); err != nil {
		_ = s.Reset()
		return false
	}
	_ = s.SetWriteDeadline(time.Now().Add(n.cfg.RequestTimeout))
	if err := wire.WriteFrame(s, wire.TypeBusy, wire.EncodeBusy(admitRetry)); err != nil {
		_ = s.Reset()
		return false
	}
	return true
}

// trackStream registers a stream handler with the WaitGroup unless the node
// is closed.
func (n *Node) trackStream() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.wg.Add(1)
	return true
}

func peerLabel(m Member) string {
	if m.Name != "" {
		return m.Name
	}
	return m.PeerID
}
