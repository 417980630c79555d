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
	"github.com/shufflenode/shufflenode/create"
	"github.com/shufflenode/shufflenode/drain"
	"github.com/shufflenode/shufflenode/failover"
	"github.com/shufflenode/shufflenode/guests"
	"github.com/shufflenode/shufflenode/held"
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/puts"
	"github.com/shufflenode/shufflenode/reads"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/refusal"
	"github.com/shufflenode/shufflenode/reports"
	"github.com/shufflenode/shufflenode/seal"
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
	// RequestPayload is Request with the payload in parts, written in
	// place where the network can (the splitter's batches, package
	// shardnet).
	RequestPayload(ctx context.Context, to string, t wire.Type, p wire.Payload) (wire.Frame, error)
	// Subscribe returns membership events from now on, and a func that
	// stops them.
	Subscribe(buf int) (<-chan member.Event, func())
	// Stream sends one request frame to the member named to and hands recv
	// the payload of each data frame of its streamed reply (recv may keep
	// it); errors as Request's, or recv's.
	Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error
	// PutRecord and GetRecord write and read the cluster's records
	// (package record).
	record.Store
}

// Service is one node's shuffle engine. Create it with New, connect it to the
// cluster with Attach (the cluster's handler is Handle), Close it when done.
type Service struct {
	// Reader is the read path: Locations, Layout, Get, GetPooled,
	// GetChunk, Fetch, FetchChunk, HandleStream.
	*reads.Reader
	// Runner runs the puts (Put, PutChunk); set by Attach.
	*puts.Runner

	cfg    Config
	log    *slog.Logger
	net    Network
	store  *spill.Store
	split  *splitter.Splitter
	shards shardnet.Sender // the splitter's sender, on the network once attached
	recv   *receiver.Receiver
	ops    limits.Ops // node-side ops' memory (Config.OpMemory)
	// inputs and outputs bound the batches the node's puts and reads hold
	// (Config.InputBytes, Config.OutputBytes).
	inputs, outputs *limits.Gate
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

	shuffles *held.Table[*entry] // the shuffles held, tombstones, closed
	mu       sync.RWMutex        // guards apiAddrs
	apiAddrs map[string]string   // each member's API address as membership events last gave it

	fo      *failover.Driver  // set by Attach
	reports *reports.Reporter // commit, begin and done reports to the coordinators; set by Attach
	drain   *drain.Drainer    // a planned departure (package drain)
	plans   *create.Planner   // checks and pins creates (package create)
	seals   *seal.Waiter      // barrier waits (package seal)
	guests  *guests.Refresher // moves guests to their record's epoch; set by Attach
}

// New opens the spill store and starts the splitter. The service handles no
// request until Attach.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	s := &Service{cfg: cfg, log: cfg.Logger, ops: limits.Ops{Budget: budget.New(cfg.OpMemory)}, inputs: limits.NewGate(cfg.InputBytes(), 2*cfg.Memory().SendBuffer()), outputs: limits.NewGate(cfg.OutputBytes(), 2*cfg.Memory().SendBuffer()), shuffles: held.New[*entry](), ready: make(chan struct{})}
	s.ctx, s.stop = context.WithCancel(context.Background())
	store, err := spill.Open(spill.Config{Dir: cfg.SpillDir, MemoryLimit: cfg.Memory().Store(), Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("service: spill store: %w", err)
	}
	s.store = store
	s.regions = offheap.NewPool(cfg.KeptRegions(), cfg.KeepRegions) // counts the arenas' memory even if it keeps none
	s.recv = receiver.New(receiver.Config{Store: store, OutputBatchRows: cfg.OutputBatchRows, Allocator: cfg.Allocator, Committed: s.reportCommit, Lookup: readHost{s}.Lookup, DiskFailed: s.diskFailed})
	s.drain = s.newDrainer()
	s.plans = s.newPlanner()
	s.seals = s.newWaiter()
	s.Reader = reads.New(reads.Config{Host: readHost{s}, Receiver: s.recv, Outputs: s.outputs, PeerError: refusal.PeerError, RefusalCode: refusal.Code})
	s.ops.Held = s.PartitionBytes
	s.split, err = splitter.New(splitter.Config{
		BufferBytes: cfg.Memory().SendBuffer(), MemoryLimit: cfg.Memory().Send(),
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
	s.ops.Log = s.log
	s.coord = coordinator.New(coordinator.Config{Node: coordNode{s}, Log: s.log, LossWait: s.cfg.LossWait, Clock: s.cfg.Clock})
	s.reports = reports.New(reports.Config{Node: n.Self().Name, Request: s.request, PeerError: refusal.PeerError, Unavailable: ErrUnavailable, Go: s.background, Log: s.log})
	s.guests = guests.New(guests.Config{Node: n.Self().Name, Log: s.log, Fetch: s.FetchRecord, Forget: s.split.ForgetBefore, Unavailable: ErrUnavailable})
	s.Runner = puts.New(puts.Config{Node: n.Self().Name, Log: s.log, Splitter: s.split, Inputs: s.inputs, Lookup: s.putLookup,
		DrainRefusal: func(sh *puts.Shuffle, k shuffle.AttemptKey) error {
			return s.drain.Refusal(sh.ID(), k)
		},
		Request: s.request, ReportTask: func(ctx context.Context, sh *puts.Shuffle, c control.Msg) (control.Reply, error) {
			return s.reports.Task(ctx, sh.ID(), sh.Coordinator(), c)
		},
		AfterPut: func(ctx context.Context, sh *puts.Shuffle, err error) {
			s.guests.AfterPut(ctx, sh.State, err)
		}})
	s.fo = failover.New(failover.Config{Host: failoverHost{s}, Coordinator: s.coord, Log: s.log, Recheck: s.cfg.Recheck, Clock: s.cfg.Clock})
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
	if !s.shuffles.Close() {
		return nil
	}
	s.stop()
	s.bg.Wait()
	err := s.split.Close()
	s.regions.Close()
	return errors.Join(err, s.store.Close())
}

// lookup returns the shuffle named id. A shuffle held as a guest (see
// guest.go) is not found: only puts use it (senderLookup).
func (s *Service) lookup(id string) (*entry, error) {
	sh, ok, tr := s.shuffles.Find(id, func(sh *entry) bool { return !s.guest(sh) })
	switch {
	case ok:
		return sh, nil
	case tr.Closed:
		return nil, ErrClosed
	case tr.Gone && tr.Left:
		return nil, fmt.Errorf("%w: %w: shuffle %s, node %s (ask another node): %s", ErrUnavailable, ErrLeft, id, s.net.Self().Name, tr.Why)
	case tr.Gone:
		return nil, fmt.Errorf("%w: %s on node %s: %s", ErrUnknownShuffle, id, s.net.Self().Name, tr.Why)
	}
	return nil, fmt.Errorf("%w: %s on node %s", ErrUnknownShuffle, id, s.net.Self().Name)
}

// request sends a control message to node and decodes its reply.
func (s *Service) request(ctx context.Context, node string, c control.Msg) (control.Reply, error) {
	body, err := control.Encode(&c)
	if err != nil {
		return control.Reply{}, err
	}
	f, err := s.net.Request(ctx, node, wire.TypeControl, body)
	if err != nil {
		return control.Reply{}, refusal.PeerError(c.Shuffle, node, err)
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

// background runs fn on a goroutine that Close waits for, and reports
// whether it does: once Close has begun, it runs nothing (the work would
// only see a cancelled context), so that no goroutine is added while Close
// waits.
func (s *Service) background(fn func(ctx context.Context)) bool {
	return s.shuffles.IfOpen(func() { s.bg.Go(func() { fn(s.ctx) }) })
}

// putLookup is senderLookup (guest.go) for a put: the put side of shuffle
// id.
func (s *Service) putLookup(ctx context.Context, id string) (*puts.Shuffle, error) {
	sh, err := s.senderLookup(ctx, id)
	if err != nil {
		return nil, err
	}
	return puts.NewShuffle(sh.Shuffle, sh.puts), nil
}

// PutResult says what a put did (package puts).
type PutResult = puts.PutResult

// OpInput and OpMemory are a node-side op's input and reserved memory
// (package limits).
type (
	OpInput  = limits.OpInput
	OpMemory = limits.OpMemory
)

// ReserveOp waits until the node's budget for node-side ops
// (Config.OpMemory) has room for an op on partition p of its inputs, and
// reserves it (limits.Ops.Reserve). The caller must Release the memory.
func (s *Service) ReserveOp(ctx context.Context, p, maxPasses int, inputs ...OpInput) (*OpMemory, error) {
	return s.ops.Reserve(ctx, p, maxPasses, inputs...)
}

// caps are the limits this node puts on creates (Config.MaxShuffles...).
func (s *Service) caps() limits.Caps {
	c := s.cfg
	return limits.Caps{Node: s.Name(), MaxShuffles: c.MaxShuffles, MaxTasks: c.MaxTasks, MaxPartitions: c.MaxPartitions, MaxRuns: c.MaxRuns}
}

// Location says where an output partition lives (package reads).
type Location = reads.Location

// readHost is what the read path needs of the service.
type readHost struct{ s *Service }

func (h readHost) Ready(ctx context.Context) error { return h.s.attached(ctx) }
func (h readHost) Members() []member.Member        { return h.s.net.Members() }
func (h readHost) Log() *slog.Logger               { return h.s.log }

func (h readHost) Lookup(id string) (*receiver.Shuffle, error) {
	sh, err := h.s.lookup(id)
	if err != nil {
		return nil, err
	}
	return sh.recv, nil
}

// LastAPIAddr returns the API address node last had among the members, as
// membership events told it ("" if none did).
func (h readHost) LastAPIAddr(node string) string {
	h.s.mu.RLock()
	defer h.s.mu.RUnlock()
	return h.s.apiAddrs[node]
}

func (h readHost) Stream(ctx context.Context, to string, t wire.Type, payload []byte, recv func([]byte) error) error {
	return h.s.net.Stream(ctx, to, t, payload, recv)
}
