package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/shufflenode/shufflenode/budget"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/failover"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shardnet"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// Network is what the service needs of the cluster; *dht.Node implements it,
// and *simnet.Node in memory for tests.
type Network interface {
	// Self is this node.
	Self() member.Member
	// Members are the live members, self included, sorted by name.
	Members() []member.Member
	// Request sends one frame to the member named to and returns its Ack.
	// Busy and refused replies come back as errors (wire.ErrBusy,
	// wire.ErrRefused with a *wire.Refusal).
	Request(ctx context.Context, to string, t wire.Type, payload []byte) (wire.Frame, error)
	// Subscribe returns membership events from now on, and a func that
	// stops them.
	Subscribe(buf int) (<-chan member.Event, func())
	// Stream sends one request frame to the member named to and hands recv
	// the payload of each data frame of its streamed reply (recv may keep
	// it); errors as Request's, or recv's.
	Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error
}

// Service is one node's shuffle engine. Create it with New, connect it to the
// cluster with Attach (the cluster's handler is Handle), Close it when done.
type Service struct {
	cfg    Config
	log    *slog.Logger
	net    Network
	store  *spill.Store
	split  *splitter.Splitter
	shards shardnet.Sender // the splitter's sender, on the network once attached
	recv   *receiver.Receiver
	ops    *budget.Budget // node-side ops' memory (Config.OpMemory)
	// inputs and outputs bound the batches the node's puts and reads hold
	// (Config.InputBytes, Config.OutputBytes).
	inputs, outputs *batchGate
	// regions keeps the arena memory of freed shuffles for the next ones
	// (none when Config.KeepRegions is negative); it counts the arenas'
	// memory all the same (Stats.MappedBytes).
	regions    *offheap.Pool
	collecting atomic.Bool              // collectSoon's collection runs
	coord      *coordinator.Coordinator // set by Attach
	ready      chan struct{}            // closed by Attach: net is set
	ctx        context.Context          // cancelled by Close; parent of background work
	stop       context.CancelFunc
	bg         sync.WaitGroup

	mu       sync.RWMutex
	shuffles map[string]*entry
	gone     tombstones        // why recently dropped shuffles are gone
	apiAddrs map[string]string // each member's API address as membership events last gave it
	closed   bool

	fo      *failover.Driver // set by Attach
	commits commitReports    // commit reports waiting for the coordinator (commits.go)
	tasks   taskReports      // begin and done reports waiting for the coordinator (taskreports.go)
	drain   drainState       // a planned departure (drain.go)
}

// New opens the spill store and starts the splitter. The service handles no
// request until Attach.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Service{cfg: cfg, log: cfg.Logger, ops: budget.New(cfg.OpMemory), inputs: newBatchGate(cfg.InputBytes(), 2*cfg.sendBuffer()), outputs: newBatchGate(cfg.OutputBytes(), 2*cfg.sendBuffer()), shuffles: make(map[string]*entry), ready: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(context.Background())
	store, err := spill.Open(spill.Config{Dir: cfg.SpillDir, MemoryLimit: cfg.storeBudget(), Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("service: spill store: %w", err)
	}
	s.store = store
	s.regions = offheap.NewPool(cfg.keptRegions(), cfg.KeepRegions) // counts the arenas' memory even if it keeps none
	s.recv = receiver.New(receiver.Config{Store: store, OutputBatchRows: cfg.OutputBatchRows, Allocator: cfg.Allocator, Committed: s.reportCommit})
	s.split, err = splitter.New(splitter.Config{
		BufferBytes: cfg.sendBuffer(), MemoryLimit: cfg.sendBudget(),
		MaxInFlight: cfg.MaxInFlight, Logger: cfg.Logger,
	}, &s.shards)
	if err != nil {
		store.Close()
		return nil, err
	}
	return s, nil
}

// Attach connects the service to its cluster. Call it exactly once;
// requests that reach Handle earlier wait for it.
func (s *Service) Attach(n Network) {
	s.net = n
	s.shards.Attach(n)
	s.log = s.log.With("node", n.Self().Name)
	s.coord = coordinator.New(coordinator.Config{Node: coordNode{s}, Log: s.log, LossWait: s.cfg.LossWait})
	s.fo = failover.New(failover.Config{Host: failoverHost{s}, Coordinator: s.coord, Log: s.log, Recheck: s.cfg.Recheck})
	s.fo.Watch(n.Subscribe(16))
	s.expireIdle()
	s.fo.RecheckLoop()
	close(s.ready)
}

// attached waits for Attach.
func (s *Service) attached(ctx context.Context) error {
	select {
	case <-s.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Name is this node's name.
func (s *Service) Name() string { return s.net.Self().Name }

// Close stops background work, the splitter and the spill store. It is
// idempotent.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.bg.Wait()
	err := s.split.Close()
	s.regions.Close()
	return errors.Join(err, s.store.Close())
}

// lookup returns the shuffle named id.
func (s *Service) lookup(id string) (*entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	sh, ok := s.shuffles[id]
	if !ok {
		if why, ok := s.gone.why(id); ok && s.gone.left[id] {
			return nil, fmt.Errorf("%w: %w: shuffle %s, node %s (ask another node): %s", ErrUnavailable, ErrLeft, id, s.net.Self().Name, why)
		} else if ok {
			return nil, fmt.Errorf("%w: %s on node %s: %s", ErrUnknownShuffle, id, s.net.Self().Name, why)
		}
		return nil, fmt.Errorf("%w: %s on node %s", ErrUnknownShuffle, id, s.net.Self().Name)
	}
	return sh, nil
}

// request sends a control message to node and decodes its reply.
func (s *Service) request(ctx context.Context, node string, c control.Msg) (control.Reply, error) {
	body, err := control.Encode(&c)
	if err != nil {
		return control.Reply{}, err
	}
	f, err := s.net.Request(ctx, node, wire.TypeControl, body)
	if err != nil {
		return control.Reply{}, peerError(c.Shuffle, node, err)
	}
	var r control.Reply
	if len(f.Payload) > 0 {
		if err := json.Unmarshal(f.Payload, &r); err != nil {
			return r, fmt.Errorf("service: shuffle %s: reply from %s: %w", c.Shuffle, node, err)
		}
	}
	return r, nil
}

// broadcast sends c to every node in nodes, in parallel, and joins the errors.
func (s *Service) broadcast(ctx context.Context, nodes []string, c control.Msg) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { _, errs[i] = s.request(ctx, n, c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// background runs fn on a goroutine that Close waits for; once Close has
// begun, it runs nothing (the work would only see a cancelled context), so
// that no goroutine is added while Close waits.
func (s *Service) background(fn func(ctx context.Context)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return
	}
	s.bg.Go(func() { fn(s.ctx) })
}

// peerError wraps a failed request to node: a refusal becomes the sentinel
// of its code, so callers (and client status codes) see what the peer meant;
// anything else is ErrUnavailable.
func peerError(shuffle, node string, err error) error {
	if code, ok := wire.RefusalCodeOf(err); ok {
		return fmt.Errorf("%w: shuffle %s: node %s: %w", refusalSentinel(code), shuffle, node, err)
	}
	if errors.Is(err, wire.ErrBusy) {
		return fmt.Errorf("service: shuffle %s: node %s: %w", shuffle, node, err)
	}
	return fmt.Errorf("%w: shuffle %s: node %s: %w", ErrUnavailable, shuffle, node, err)
}

// refusalSentinel is the inverse of refusalCode.
func refusalSentinel(code wire.RefusalCode) error {
	switch code {
	case wire.RefuseUnknownShuffle:
		return ErrUnknownShuffle
	case wire.RefuseStaleEpoch:
		return ErrStaleEpoch
	case wire.RefuseSealed:
		return ErrSealed
	case wire.RefuseBadRequest:
		return ErrBadInput
	case wire.RefuseNotOwner:
		return ErrNotOwner
	case wire.RefuseClosing:
		return ErrUnavailable
	case wire.RefuseNotSealed:
		return ErrNotSealed
	case shuffle.RefuseLeft:
		return fmt.Errorf("%w: %w", ErrUnavailable, ErrLeft)
	case shuffle.RefuseReplayDiffers:
		return fmt.Errorf("%w: %w", ErrFailed, ErrReplayDiffers)
	case shuffle.RefuseExists:
		return ErrExists
	}
	return ErrFailed
}
