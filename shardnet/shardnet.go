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

	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// Network is what a Sender needs of the network: *dht.Node and
// *simnet.Node implement it.
type Network interface {
	// RequestPayload sends one frame whose payload is p (written in
	// place where the network can) to the member named to and returns
	// its Ack; busy and refused replies come back as errors
	// (wire.ErrBusy, wire.ErrRefused).
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
	_, err := (*n).RequestPayload(ctx, b.Dest, wire.TypeShards, b.Payload())
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
