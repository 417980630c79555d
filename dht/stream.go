package dht

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/shufflenode/shufflenode/wire"
)

// StreamProtocol carries requests whose reply is streamed: one request
// frame, then any number of wire.TypeData frames, then one final reply
// frame (Ack, Busy or Refused). Each such request has a stream of its own.
const StreamProtocol = "/shufflenode/stream/1"

// StreamHandler serves one streamed request: send writes one TypeData frame
// (it blocks while the peer reads slowly: back-pressure; its payload is
// only read during the call), and the returned type and payload are the
// final reply (TypeAck, TypeBusy or TypeRefused). It runs on the stream's
// goroutine; ctx ends when the node closes or the peer goes away.
type StreamHandler func(ctx context.Context, from Member, req wire.Frame, send func(payload []byte) error) (wire.Type, []byte)

// SetStreamHandler installs the server of streamed requests. Until it is
// called they are refused.
func (n *Node) SetStreamHandler(h StreamHandler) { n.streamHandler.Store(&h) }

// Stream sends one request frame of type t to the member called to and
// hands recv the payload of every data frame of the reply, in order; recv
// may keep the payload (it is allocated for it). It returns nil once the
// final reply is an Ack, the reply's error for Busy or Refused (as Request
// does), recv's first error, or ErrTransport (with the cause) if the stream
// failed. A request to this node calls the handler directly. A ctx without a
// deadline is not given one: a stream lasts as long as its data does.
func (n *Node) Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error {
	if n.isClosed() {
		return fmt.Errorf("%w: stream %s to node %s", ErrClosed, t, to)
	}
	if to == n.cfg.Name {
		return n.streamSelf(ctx, t, payload, recv)
	}
	e, ok := n.lookup(to)
	if !ok {
		return fmt.Errorf("%w: node %q (stream %s)", ErrUnknownMember, to, t)
	}
	s, err := n.memberStream(ctx, e.peer, StreamProtocol)
	if err != nil {
		return fmt.Errorf("%w: stream %s to node %s: %w", ErrTransport, t, to, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stop()
	f, err := n.readStream(s, t, payload, recv)
	if err != nil {
		_ = s.Reset()
		return errors.Join(err, ctx.Err())
	}
	_ = s.Close()
	return n.replyError(f, t, to)
}

// streamSelf runs this node's handler in place of a stream; every data
// payload is copied for recv, as the network would.
func (n *Node) streamSelf(ctx context.Context, t wire.Type, payload []byte, recv func([]byte) error) error {
	h := n.streamHandler.Load()
	if h == nil {
		return fmt.Errorf("%w: stream %s to node %s: no stream handler", ErrTransport, t, n.cfg.Name)
	}
	var recvErr error
	rt, reply := (*h)(ctx, n.Self(), wire.Frame{Type: t, Payload: payload}, func(b []byte) error {
		if recvErr == nil {
			recvErr = recv(append([]byte(nil), b...))
		}
		return recvErr
	})
	if recvErr != nil {
		return recvErr
	}
	return n.replyError(wire.Frame{Type: rt, Payload: reply}, t, n.cfg.Name)
}

// readStream writes the request and reads data frames until the final
// reply, which it returns. A recv error is returned as it is; anything else
// wraps ErrTransport.
func (n *Node) readStream(s network.Stream, t wire.Type, payload []byte, recv func([]byte) error) (wire.Frame, error) {
	if err := wire.WriteFrame(s, t, payload); err != nil {
		return wire.Frame{}, fmt.Errorf("%w: stream %s: %w", ErrTransport, t, err)
	}
	for {
		f, err := wire.ReadFrame(s, n.cfg.MaxPayload)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the peer closed without a final reply
		}
		if err != nil {
			return wire.Frame{}, fmt.Errorf("%w: stream %s: %w", ErrTransport, t, err)
		}
		if f.Type != wire.TypeData {
			return f, nil
		}
		if err := recv(f.Payload); err != nil {
			return wire.Frame{}, err
		}
	}
}

// serveRead answers one streamed request. It runs on libp2p's goroutine for
// the stream; Close waits for it.
func (n *Node) serveRead(s network.Stream) {
	if !n.trackStream() {
		_ = s.Reset()
		return
	}
	defer n.wg.Done()
	from := n.memberByPeer(s.Conn().RemotePeer())
	_ = s.SetReadDeadline(time.Now().Add(n.cfg.RequestTimeout))
	req, err := wire.ReadFrame(s, n.cfg.MaxPayload)
	if err != nil {
		n.log.Debug("bad stream request", "peer", peerLabel(from), "err", err)
		_ = s.Reset()
		return
	}
	rt, reply := n.handleRead(s, from, req)
	_ = s.SetWriteDeadline(time.Now().Add(n.cfg.RequestTimeout))
	if err := wire.WriteFrame(s, rt, reply); err != nil {
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// handleRead calls the stream handler with a send that writes data frames
// on s; the context ends with the node or when a write fails.
func (n *Node) handleRead(s network.Stream, from Member, req wire.Frame) (wire.Type, []byte) {
	h := n.streamHandler.Load()
	if h == nil {
		return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: wire.RefuseUnsupported, Reason: "streamed requests are not served here"})
	}
	ctx, cancel := context.WithCancel(n.ctx)
	defer cancel()
	send := func(b []byte) error {
		_ = s.SetWriteDeadline(time.Now().Add(n.cfg.RequestTimeout))
		if err := wire.WriteFrame(s, wire.TypeData, b); err != nil {
			cancel()
			return fmt.Errorf("%w: streaming to %s: %w", ErrTransport, peerLabel(from), err)
		}
		return nil
	}
	return (*h)(ctx, from, req, send)
}
