package drain

import (
	"context"
	"errors"
	"log/slog"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// ErrDraining: the node is draining (it leaves the cluster soon) and takes
// no new input task; it travels as the Config.Unavailable sentinel, so a
// client runs the task on another node.
var ErrDraining = errors.New("drain: node draining")

// errNoHandover: a shuffle holds committed data on this node that no other
// node keeps a copy of, and this node cannot copy it to the partitions'
// next owners (it coordinates the shuffle, or the shuffle is an array
// rechunk), so the node leaves as lost and the coordinator replays it.
var errNoHandover = errors.New("drain: this node cannot hand its committed partitions over")

// Host is what a drain needs of its node. Its methods do not block unless
// they take a context.
type Host interface {
	// Name is the node's name.
	Name() string
	// Log is the node's logger.
	Log() *slog.Logger
	// RunningPuts counts the puts the node runs, over every shuffle.
	RunningPuts() int
	// Held returns the shuffles the node holds as a member.
	Held() []*shuffle.State
	// Lookup returns shuffle id as the node holds it as a member, and its
	// receiver part; an error if it holds none.
	Lookup(id string) (*shuffle.State, *receiver.Shuffle, error)
	// Request sends a control message to node and returns its reply; a
	// refusal or a transport error comes back as an error.
	Request(ctx context.Context, node string, c control.Msg) (control.Reply, error)
	// Send sends one frame to node and waits for its Ack; busy replies
	// come back as wire.ErrBusy, refusals as wire.ErrRefused.
	Send(ctx context.Context, node string, t wire.Type, body []byte) error
	// CommitsBusy reports whether the commit reports the node queued for
	// st have yet to reach its coordinator.
	CommitsBusy(st *shuffle.State) bool
	// Publish writes st's record in the background.
	Publish(st *shuffle.State)
	// Go runs fn on a goroutine that the node's Close waits for, unless
	// Close has begun, and reports whether it runs.
	Go(fn func(ctx context.Context)) bool
	// IsMember reports whether node is a live member of the cluster now.
	IsMember(node string) bool
}

// Coordinator is what the coordinator side of a handover needs of the
// node's coordinator; *coordinator.Coordinator implements it.
type Coordinator interface {
	// HandOver moves sh's epoch without node, a planned departure, and
	// returns the epoch message.
	HandOver(ctx context.Context, sh *coordinator.Shuffle, node string) (control.Msg, error)
	// HandOverEnd ends node's handover of sh (ok: its copy succeeded).
	HandOverEnd(sh *coordinator.Shuffle, node string, ok bool, why string) bool
	// Handing reports whether node's handover of sh runs.
	Handing(sh *coordinator.Shuffle, node string) bool
}

// Config configures a Drainer. Every field is required.
type Config struct {
	Host Host
	// Receiver exports the partitions a draining node holds and adopts
	// those handed to this node.
	Receiver *receiver.Receiver
	// Coordinator returns the node's coordinator (it may be built after
	// the Drainer).
	Coordinator func() Coordinator
	// PeerError is the error a failed handover message to node becomes.
	PeerError func(id, node string, err error) error
	// Conflict is the sentinel of a second concurrent Drain; Unavailable
	// the one a put refused while draining travels as.
	Conflict, Unavailable error
}
