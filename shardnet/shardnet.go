// Package shardnet is the network end of the send path: it delivers the
// splitter's batches (package splitter) to their receivers as shards
// frames over the node's network (package dht, or package simnet in
// memory). A batch goes api -> service -> splitter -> shardnet -> network,
// and never back up through the service.
//
// # Concurrency
//
// Sender is safe for concurrent use; the splitter calls Send from one
// goroutine per destination queue.
package shardnet

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// Network is what a Sender needs of the network: *dht.Node and
// *simnet.Node implement it.
type Network interface {
	// Request sends one frame to the member named to and returns its Ack;
	// busy and refused replies come back as errors (wire.ErrBusy,
	// wire.ErrRefused).
	Request(ctx context.Context, to string, t wire.Type, payload []byte) (wire.Frame, error)
}

// payloadRequester is a Network that writes a payload in parts without
// joining it, its CRC combined from those it knows (dht.Node does).
type payloadRequester interface {
	RequestPayload(ctx context.Context, to string, t wire.Type, p wire.Payload) (wire.Frame, error)
}

// ErrDetached: Send was called before Attach gave the Sender its network.
var ErrDetached = errors.New("shardnet: no network attached")

// Sender delivers splitter batches as shards frames; it implements
// splitter.Sender. Its zero value is ready once Attach gave it a network.
type Sender struct {
	net atomic.Pointer[Network]
}

// Attach makes n the network batches go through.
func (x *Sender) Attach(n Network) { x.net.Store(&n) }

// Send implements splitter.Sender: busy replies and transport errors are
// retried (receivers drop resent entries by seq); refusals are final.
func (x *Sender) Send(ctx context.Context, b *splitter.Batch) error {
	n := x.net.Load()
	if n == nil {
		return ErrDetached
	}
	_, err := request(ctx, *n, b.Dest, shard.MsgPayload(b.Msg()))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrRefused):
		return err
	case errors.Is(err, wire.ErrBusy):
		d, _ := wire.RetryAfterOf(err)
		return splitter.Retryable(err, max(d, time.Millisecond))
	}
	return splitter.Retryable(err, 0)
}

// request sends a shards frame whose payload is p: in place where the
// network can, else joined.
func request(ctx context.Context, n Network, to string, p wire.Payload) (wire.Frame, error) {
	if pr, ok := n.(payloadRequester); ok {
		return pr.RequestPayload(ctx, to, wire.TypeShards, p)
	}
	return n.Request(ctx, to, wire.TypeShards, wire.Join(p.Parts))
}
