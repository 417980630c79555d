package failover

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/member"
)

// Host is what the driver needs of the node's service. Its methods are
// called from the driver's goroutines (membership events, rechecks,
// background work) and from request handlers, concurrently: they must be
// safe for concurrent use.
type Host interface {
	// Name is this node.
	Name() string
	// Lookup returns the shuffle named id held on this node; the error
	// names why it is not (unknown, gone, closed).
	Lookup(id string) (*Shuffle, error)
	// Held returns the shuffles this node holds now.
	Held() []*Shuffle
	// Request sends c to node and returns its reply; a refusal comes back
	// as an error (see wire.RefusalCodeOf).
	Request(ctx context.Context, node string, c control.Msg) (control.Reply, error)
	// Broadcast sends c to every node of nodes, in parallel, and joins the
	// errors.
	Broadcast(ctx context.Context, nodes []string, c control.Msg) error
	// Background runs fn on a goroutine that the service's Close waits
	// for, with a context Close cancels; it runs nothing once Close began.
	Background(fn func(ctx context.Context))
	// Publish writes sh's record, in the background, where the network
	// keeps records.
	Publish(sh *Shuffle)
	// Drop frees shuffle id on this node and keeps reason as its
	// tombstone; left: the shuffle goes on without this node.
	Drop(id, reason string, left bool) error
	// CoordOf returns sh's coordinator part, or a refusal that names who
	// coordinates it if this node does not (yet).
	CoordOf(sh *Shuffle) (*coordinator.Shuffle, error)
	// ForgetBefore drops the sends of shuffle id queued for epochs before
	// epoch; Forget drops all of them.
	ForgetBefore(id string, epoch uint64)
	Forget(id string)
	// NoteMember records a member as a membership event gave it (its API
	// address).
	NoteMember(m member.Member)
}

// Config is the driver's. The zero value of Recheck means ten seconds, of
// Clock the wall clock.
type Config struct {
	// Host is the service the driver works for. Required.
	Host Host
	// Coordinator is the node's coordinator role. Required.
	Coordinator *coordinator.Coordinator
	// Log receives the driver's warnings; nil: slog.Default().
	Log *slog.Logger
	// Recheck is the period of the rejoin checks, and the age below which
	// a shuffle is not checked.
	Recheck time.Duration
	// Clock times the rejoin checks, a dropped takeover's second try and
	// the memory of members silent to a ping; nil: the wall clock. A
	// shuffle's age (NewShuffle's born) is on this clock.
	Clock clock.Clock
}

// Driver performs the recovery core's decisions (package recovery) for
// every shuffle a node holds: it follows membership, pings, takes over,
// declares members lost, checks after a cut and fences replaced
// coordinators. All its methods are safe for concurrent use.
type Driver struct {
	host  Host
	coord *coordinator.Coordinator
	log   *slog.Logger
	cfg   Config

	mu   sync.RWMutex
	down map[string]bool // members seen failed or gone, and not back

	takeovers takeoverStats
	recheck   rechecker
	silent    silence // members that recently did not answer a ping (quorum.go)
	// afterPings, when set (by tests), is called when this node's pings as
	// a successor found a majority up, before it checks its route.
	afterPings atomic.Pointer[func(node, id string)]
}

// New returns a driver for cfg. It starts nothing: call Watch and
// RecheckLoop.
func New(cfg Config) *Driver {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = 10 * time.Second
	}
	cfg.Clock = clock.Or(cfg.Clock)
	return &Driver{host: cfg.Host, coord: cfg.Coordinator, log: cfg.Log, cfg: cfg, silent: silence{clock: cfg.Clock}, recheck: rechecker{run: newGate()}}
}

// Name is this node.
func (s *Driver) Name() string { return s.host.Name() }

func (s *Driver) lookup(id string) (*Shuffle, error) { return s.host.Lookup(id) }
func (s *Driver) held() []*Shuffle                   { return s.host.Held() }
func (s *Driver) publish(sh *Shuffle)                { s.host.Publish(sh) }
func (s *Driver) background(fn func(context.Context)) {
	s.host.Background(fn)
}
func (s *Driver) request(ctx context.Context, node string, c control.Msg) (control.Reply, error) {
	return s.host.Request(ctx, node, c)
}
func (s *Driver) broadcast(ctx context.Context, nodes []string, c control.Msg) error {
	return s.host.Broadcast(ctx, nodes, c)
}

// Takeovers returns the count, end and duration of this node's last
// finished takeover.
func (s *Driver) Takeovers() (int64, time.Time, time.Duration) { return s.takeovers.snapshot() }

// SetAfterPings has f called with the node and the shuffle each time this
// node's pings, as a successor, found a majority up, before it checks its
// route and takes over (for tests); nil removes it.
func (s *Driver) SetAfterPings(f func(node, id string)) {
	if f == nil {
		s.afterPings.Store(nil)
		return
	}
	s.afterPings.Store(&f)
}
