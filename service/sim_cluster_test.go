package service_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitter"
)

// The in-memory network serves the engine exactly as the real one does.
var _ service.Network = (*simnet.Node)(nil)

// simCluster is n services joined by a simnet.Network in this process.
// Node i is named "node-i"; node 0 creates every shuffle, so it is the
// first coordinator. The driver methods do what the Go client does (client.Run),
// with Service calls instead of Flight.
type simCluster struct {
	t     testing.TB
	net   *simnet.Network
	svcs  []*service.Service
	index map[string]int

	mu      sync.Mutex
	dead    map[int]bool
	strict  bool                         // see retryable
	eager   bool                         // replay without the Go client's pause (see TestSimReplayRacesReopen)
	asker   int                          // the barrier and locations are asked of the first live node from this one
	attempt map[string]map[uint64]uint32 // shuffle -> task -> next attempt
}

// startSim starts n services with cfg on a network with ncfg. A non-zero
// cfg.MemoryLimit gets a spill directory under t.TempDir().
func startSim(t testing.TB, n int, cfg service.Config, ncfg simnet.Config) *simCluster {
	t.Helper()
	nw, err := simnet.New(ncfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &simCluster{t: t, net: nw, index: map[string]int{}, dead: map[int]bool{}, attempt: map[string]map[uint64]uint32{}}
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = t.TempDir() // before the Cleanup below, so removed after it
	}
	t.Cleanup(c.close)
	cfg.Logger = simLogger()
	for i, dir := range dirs {
		if cfg.MemoryLimit > 0 {
			cfg.SpillDir = dir
		}
		c.add(i, cfg)
	}
	return c
}

// add starts node i.
func (c *simCluster) add(i int, cfg service.Config) {
	svc, err := service.New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	name := fmt.Sprintf("node-%d", i)
	nd, err := c.net.Add(name, svc.Handle)
	if err != nil {
		c.t.Fatal(err)
	}
	nd.SetStreamHandler(svc.HandleStream)
	svc.Attach(nd)
	c.svcs = append(c.svcs, svc)
	c.index[name] = i
}

func (c *simCluster) close() {
	for _, s := range c.svcs {
		_ = s.Close()
	}
	_ = c.net.Close()
}

// simLogger logs errors only (everything with SHUFFLENODE_TEST_DEBUG=1,
// testkit.DebugEnv).
func simLogger() *slog.Logger {
	if os.Getenv(testkit.DebugEnv) != "" {
		return testkit.Logger()
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// trace prints a driver step with SHUFFLENODE_TEST_DEBUG=1.
func trace(format string, args ...any) {
	if os.Getenv(testkit.DebugEnv) != "" {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}
}

// kill crashes node i: the others see it fail, its service stops.
func (c *simCluster) kill(i int) {
	c.mu.Lock()
	c.dead[i] = true
	c.mu.Unlock()
	if err := c.net.Kill(fmt.Sprintf("node-%d", i)); err != nil {
		c.t.Error(err)
	}
	go c.svcs[i].Close() // a crash: puts running there fail
}

func (c *simCluster) alive(i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.dead[i]
}

// nextAttempt returns the attempt number to use for task, and bumps it.
func (c *simCluster) nextAttempt(id string, task uint64) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.attempt[id]
	if m == nil {
		m = map[uint64]uint32{}
		c.attempt[id] = m
	}
	a := m[task]
	m[task]++
	return a
}

// input produces one input task: its record batches (released by the
// driver) for dataframes, or its chunk for arrays.
type input struct {
	recs  func(task int) []arrow.Record
	chunk func(task int) rechunk.Chunk
}

// run creates sp on node 0, puts every task, and settles the barrier,
// replaying what it hands back, like client.Run. It returns the barrier's
// last result.
func (c *simCluster) run(ctx context.Context, sp *spec.Spec, in input) service.BarrierResult {
	c.t.Helper()
	if err := c.svcs[0].Create(ctx, sp); err != nil {
		c.t.Fatalf("create %s: %v", sp.ID, err)
	}
	tasks := make([]uint64, sp.Tasks)
	for i := range tasks {
		tasks[i] = uint64(i)
	}
	return c.settle(ctx, sp, in, tasks)
}

// settle puts tasks, then waits at the barrier and puts what it hands
// back, in rounds, until the shuffle seals.
func (c *simCluster) settle(ctx context.Context, sp *spec.Spec, in input, tasks []uint64) service.BarrierResult {
	c.t.Helper()
	for round := 0; ; round++ {
		c.putAll(ctx, sp, in, tasks)
		b, err := c.svcs[c.liveNode(c.asker)].Barrier(ctx, sp.ID)
		if err != nil {
			c.t.Fatalf("barrier of %s (round %d): %v", sp.ID, round, err)
		}
		if b.Sealed {
			return b
		}
		if round == 10 {
			c.t.Fatalf("shuffle %s not sealed after %d rounds, replay %v", sp.ID, round, b.Replay)
		}
		tasks = b.Replay
		if !c.eager {
			time.Sleep(time.Duration(50<<round) * time.Millisecond) // as client.Run does
		}
	}
}

// putAll puts tasks, a few at a time; a put that keeps failing with a
// retryable error is left for the barrier to hand back.
func (c *simCluster) putAll(ctx context.Context, sp *spec.Spec, in input, tasks []uint64) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2*len(c.svcs))
	for _, task := range tasks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := c.putTask(ctx, sp, in, task); err != nil && !c.retryable(ctx, err) {
				c.t.Errorf("put %s task %d: %v", sp.ID, task, err)
			}
		})
	}
	wg.Wait()
}

// putTask runs task with new attempts, on the next live node each time,
// until one succeeds, an error is final, or three tries failed. Any error
// of a put on a node that was lost is retryable, as for the Go client (the
// node went away mid-call).
func (c *simCluster) putTask(ctx context.Context, sp *spec.Spec, in input, task uint64) error {
	var err error
	for range 3 {
		a := c.nextAttempt(sp.ID, task)
		i := c.liveNode(int(task) + int(a))
		_, err = c.putOnce(ctx, i, sp, in, task, a)
		trace("put %s task %d attempt %d on node-%d: %v", sp.ID, task, a, i, err)
		if err != nil && !c.alive(i) {
			err = fmt.Errorf("%w: node-%d was lost: %w", service.ErrUnavailable, i, err)
		}
		if err == nil || !c.retryable(ctx, err) {
			return wrapNode(err, i)
		}
	}
	return err
}

func wrapNode(err error, i int) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("on node-%d: %w", i, err)
}

// liveNode returns the first live node from i on (modulo n).
func (c *simCluster) liveNode(i int) int {
	for k := range len(c.svcs) {
		if j := (i + k) % len(c.svcs); c.alive(j) {
			return j
		}
	}
	c.t.Fatal("no live node")
	return -1
}

// putOnce runs one attempt of task on node i.
func (c *simCluster) putOnce(ctx context.Context, i int, sp *spec.Spec, in input, task uint64, a uint32) (service.PutResult, error) {
	svc := c.svcs[i]
	if sp.Kind == spec.Array {
		return svc.PutChunk(ctx, sp.ID, task, a, in.chunk(int(task)))
	}
	recs := in.recs(int(task))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	k := 0
	next := func() (arrow.Record, error) {
		if k == len(recs) {
			return nil, io.EOF
		}
		k++
		return recs[k-1], nil
	}
	schema, _ := sp.ArrowSchema()
	return svc.Put(ctx, sp.ID, task, a, schema, next)
}

// retryable says whether a put may run again as a new attempt: a peer or
// the node was unreachable or lost, or the epoch moved. Unless the cluster
// is strict, a put cancelled while ctx is alive is retryable too, as for
// the Go client, which retries codes.Canceled (see
// TestSimStaleEpochPutError for why).
func (c *simCluster) retryable(ctx context.Context, err error) bool {
	if errors.Is(err, service.ErrUnavailable) || errors.Is(err, service.ErrStaleEpoch) || errors.Is(err, service.ErrClosed) {
		return true
	}
	if errors.Is(err, splitter.ErrGaveUp) {
		return true // a put whose sends ran out of retries is Internal to the Go client, which runs it again
	}
	return !c.strict && ctx.Err() == nil && errors.Is(err, context.Canceled)
}

// owner returns the service that owns partition p of id, as node 0 sees it.
func (c *simCluster) owner(id string, p int) *service.Service {
	c.t.Helper()
	locs, err := c.svcs[c.liveNode(c.asker)].Locations(id)
	if err != nil {
		c.t.Fatalf("locations of %s: %v", id, err)
	}
	return c.svcs[c.index[locs[p].Node]]
}

// read reads partition p of id from its owner; emit sees every record
// (the driver releases it).
func (c *simCluster) read(ctx context.Context, id string, p int, emit func(arrow.Record)) {
	c.t.Helper()
	err := c.owner(id, p).Get(ctx, id, p, func(r arrow.Record) error {
		defer r.Release()
		emit(r)
		return nil
	})
	if err != nil {
		c.t.Fatalf("get %s partition %d: %v", id, p, err)
	}
}
