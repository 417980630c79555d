package reads

import (
	"context"
	"log/slog"

	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/wire"
)

// Host is what the read path needs of its node (package service
// implements it). Its methods must not block, except Ready and Stream.
type Host interface {
	// Ready waits until the node is attached to its cluster, or ctx ends.
	Ready(ctx context.Context) error
	// Lookup returns the receive side of shuffle id on this node, or the
	// error that names why the node does not hold it.
	Lookup(id string) (*receiver.Shuffle, error)
	// Members are the live cluster members as the node sees them.
	Members() []member.Member
	// LastAPIAddr is the API address node last had among the members
	// ("" if it never had one).
	LastAPIAddr(node string) string
	// Stream sends one request frame to the member named to and hands recv
	// the payload of each data frame of its streamed reply (recv may keep
	// it).
	Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error
	// Log is the node's logger.
	Log() *slog.Logger
}

// Config configures a Reader. Every field is required.
type Config struct {
	Host Host
	// Receiver holds the partitions this node owns.
	Receiver *receiver.Receiver
	// Outputs bounds the output batches GetPooled's reads hold at once.
	Outputs *limits.Gate
	// PeerError is the error of a read that owner refused or that failed
	// on the way (a refusal's sentinel, or unavailable).
	PeerError func(id, owner string, err error) error
	// RefusalCode is the code a refused peer read answers for err.
	RefusalCode func(err error) wire.RefusalCode
}

// Reader is one node's read path.
type Reader struct{ cfg Config }

// New returns a Reader.
func New(cfg Config) *Reader { return &Reader{cfg: cfg} }
