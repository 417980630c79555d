package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Job is a whole shuffle for Run.
type Job struct {
	// Spec of the shuffle; it is created on Nodes[0], its coordinator.
	Spec *spec.Spec
	// Nodes are API addresses; attempt a of input task i is put on
	// Nodes[(i+a) % len(Nodes)], so a task whose node died runs elsewhere.
	Nodes []string
	// Input produces input task i's records; Run releases them after the put.
	Input func(task int) ([]arrow.Record, error)
	// Parallel puts at once (default 2 per node).
	Parallel int
	// MaxAttempts per task and round (default 3): a put that fails with a
	// retryable code runs again at once with the next attempt number; after
	// that the task is left to the next barrier round.
	MaxAttempts int
	// MaxRounds bounds the barrier rounds (default 30): after each round the
	// coordinator names the tasks to run again (a node was lost, or their
	// puts failed) until the shuffle seals.
	MaxRounds int
	// Progress, if set, is called after each successful put.
	Progress func(done, total int)
}

// Result is a finished (sealed) shuffle.
type Result struct {
	Shuffle   string
	Endpoints []Endpoint
	// Epoch is the shuffle's final epoch: the number of nodes lost.
	Epoch uint64
	// ReplaySet is how many finished tasks the lost nodes took with them
	// (the coordinator's replay sets; Replayed also counts failed puts).
	ReplaySet int
	clients   []*Client
	attempts  atomic.Int64
	replayed  atomic.Int64

	mu   sync.Mutex
	next map[int]uint32 // next attempt number per task
}

// Attempts is the number of puts made (>= tasks; more if some were retried).
func (r *Result) Attempts() int64 { return r.attempts.Load() }

// Replayed is the number of task runs the coordinator asked for after the
// first round (the replay set of lost nodes, and failed puts).
func (r *Result) Replayed() int64 { return r.replayed.Load() }

// ReadChunk reads new chunk p of an array shuffle.
func (r *Result) ReadChunk(ctx context.Context, p int) (rechunk.Chunk, error) {
	return r.clients[p%len(r.clients)].ReadChunk(ctx, r.Endpoints[p])
}

// Layout returns the layout of an array shuffle (the __partitioned__ form).
func (r *Result) Layout(ctx context.Context) (service.Layout, error) {
	return r.clients[0].Layout(ctx, r.Shuffle)
}

// Read streams output partition p to fn. If the owner is unreachable before
// anything was streamed, Read asks the coordinator where p lives now (a
// replicated shuffle moves it to its backup when a node is lost) and tries
// again for up to readRetry; once a record was streamed it does not retry,
// so no row reaches fn twice.
func (r *Result) Read(ctx context.Context, p int, fn func(arrow.Record) error) error {
	deadline := time.Now().Add(readRetry)
	for {
		ep := r.endpoint(p)
		streamed := false
		err := r.clients[p%len(r.clients)].Read(ctx, ep, func(rec arrow.Record) error {
			streamed = true
			return fn(rec)
		})
		if err == nil || streamed || status.Code(err) != codes.Unavailable || time.Now().After(deadline) {
			return unreachable(err, "owner", ep.Addr)
		}
		if !sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
		if ferr := r.refresh(ctx); ferr != nil {
			return fmt.Errorf("%w (reading partition %d from %s: %w)", ferr, p, ep.Addr, err)
		}
	}
}

// readRetry bounds how long Read waits for a lost owner's partitions to move
// (the failure detector takes seconds).
const readRetry = 30 * time.Second

// endpoint returns where p lives as last known.
func (r *Result) endpoint(p int) Endpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Endpoints[p]
}

// refresh asks the coordinator for the current locations.
//
// It returns an error only if the coordinator failed the shuffle meanwhile
// (a node lost after the seal without a backup of its partitions): then
// no retry can succeed, and the coordinator's reason says why.
func (r *Result) refresh(ctx context.Context) error {
	if st, err := r.clients[0].Status(ctx, r.Shuffle); err == nil && st.Phase == service.Failed.String() {
		return fmt.Errorf("client: shuffle %s failed: %s", r.Shuffle, st.Error)
	}
	eps, err := r.clients[0].Locations(ctx, r.Shuffle)
	if err != nil {
		return nil
	}
	r.mu.Lock()
	r.Endpoints = eps
	r.mu.Unlock()
	return nil
}

// Close closes the shuffle on the cluster and the connections.
func (r *Result) Close(ctx context.Context) error {
	err := r.clients[0].CloseShuffle(ctx, r.Shuffle)
	for _, c := range r.clients {
		err = errors.Join(err, c.Close())
	}
	return err
}

// attempt returns a fresh attempt number for task t.
func (r *Result) attempt(t int) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.next[t]
	r.next[t] = a + 1
	return a
}

// Run runs a whole shuffle and returns it sealed.
func Run(ctx context.Context, job Job) (*Result, error) {
	if len(job.Nodes) == 0 || job.Spec == nil || job.Input == nil {
		return nil, errors.New("client: Run needs a spec, nodes and an input")
	}
	clients, err := dialAll(job.Nodes)
	if err != nil {
		return nil, err
	}
	res := &Result{Shuffle: job.Spec.ID, clients: clients, next: map[int]uint32{}}
	if err := run(ctx, job, res); err != nil {
		for _, c := range clients {
			c.Close()
		}
		return nil, err
	}
	return res, nil
}

// run creates the shuffle, then puts tasks and waits at the barrier in
// rounds until it seals.
func run(ctx context.Context, job Job, res *Result) error {
	schema, err := inputSchema(job.Spec)
	if err != nil {
		return err
	}
	coord := res.clients[0]
	if err := coord.Create(ctx, job.Spec); err != nil {
		return fmt.Errorf("client: create %s: %w", job.Spec.ID, err)
	}
	tasks := make([]uint64, job.Spec.Tasks)
	for i := range tasks {
		tasks[i] = uint64(i)
	}
	rounds := cmp.Or(job.MaxRounds, 30)
	for round := 0; ; round++ {
		if err := putAll(ctx, job, res, schema, tasks); err != nil {
			return err
		}
		b, err := coord.Barrier(ctx, job.Spec.ID)
		if err != nil {
			return fmt.Errorf("client: barrier of %s: %w", job.Spec.ID, unreachable(err, "coordinator", coord.Addr()))
		}
		res.Epoch, res.ReplaySet = b.Epoch, b.ReplaySet
		if b.Sealed {
			break
		}
		if round+1 >= rounds {
			return fmt.Errorf("client: shuffle %s not sealed after %d rounds; %d tasks still pending", job.Spec.ID, rounds, len(b.Replay))
		}
		tasks = b.Replay
		res.replayed.Add(int64(len(tasks)))
		if !sleep(ctx, min(50*time.Millisecond<<round, 2*time.Second)) {
			return ctx.Err()
		}
	}
	res.Endpoints, err = coord.Locations(ctx, job.Spec.ID)
	if err != nil {
		return fmt.Errorf("client: locations of %s: %w", job.Spec.ID, unreachable(err, "coordinator", coord.Addr()))
	}
	return nil
}

// putAll puts tasks with bounded parallelism. A put that keeps failing with
// a retryable code is left for the barrier to hand back; any other error
// stops everything.
func putAll(ctx context.Context, job Job, res *Result, schema *arrow.Schema, tasks []uint64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	for range cmp.Or(job.Parallel, 2*len(job.Nodes)) {
		wg.Go(func() {
			for t := range ch {
				err := putTask(ctx, job, res, schema, t)
				switch {
				case err == nil:
					if n := done.Add(1); job.Progress != nil {
						job.Progress(min(int(n), len(tasks)), len(tasks))
					}
				case ctx.Err() != nil:
				case !retryable(err):
					cancel(err)
				}
			}
		})
	}
	feed(ctx, ch, tasks)
	wg.Wait()
	return context.Cause(ctx)
}

func feed(ctx context.Context, ch chan<- int, tasks []uint64) {
	defer close(ch)
	for _, t := range tasks {
		select {
		case ch <- int(t):
		case <-ctx.Done():
			return
		}
	}
}

// putTask puts task t, retrying retryable failures with new attempts on
// the next node.
func putTask(ctx context.Context, job Job, res *Result, schema *arrow.Schema, t int) error {
	var err error
	var c *Client
	for i := range cmp.Or(job.MaxAttempts, 3) {
		if i > 0 && !sleep(ctx, 50*time.Millisecond<<i) {
			break // backoff: a node being declared dead fails puts fast
		}
		a := res.attempt(t)
		c = res.clients[(t+int(a))%len(res.clients)]
		res.attempts.Add(1)
		if err = putOnce(ctx, job, c, schema, t, a); err == nil || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("client: shuffle %s task %d on %s: %w", job.Spec.ID, t, c.Addr(), err)
	}
	return nil
}

// inputSchema is the schema of a shuffle's put streams: the table's for
// dataframes, api.ArraySchema for arrays (one chunk per put, see
// api.ChunkRecord).
func inputSchema(sp *spec.Spec) (*arrow.Schema, error) {
	if sp.Kind == spec.Array {
		return api.ArraySchema(sp.DType), nil
	}
	return sp.ArrowSchema()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func putOnce(ctx context.Context, job Job, c *Client, schema *arrow.Schema, t int, attempt uint32) error {
	recs, err := job.Input(t)
	if err != nil {
		return err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	i := 0
	next := func() (arrow.Record, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	}
	_, err = c.Put(ctx, api.PutCmd{Shuffle: job.Spec.ID, Task: uint64(t), Attempt: attempt}, schema, next)
	return err
}

// retryable says whether a failed put may be run again as a new attempt:
// the node or a peer was unreachable, the epoch moved, or the node went away
// mid-call (Canceled from the server while our own context is alive).
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// unreachable says, when err is a failure to reach the node at addr (its
// role in the shuffle: "coordinator" or "owner"), what that means: a lost
// coordinator fails its shuffles, and so does a node lost after the seal.
// The status code is kept (status.Code sees through the wrapping); nil
// stays nil.
func unreachable(err error, role, addr string) error {
	if status.Code(err) != codes.Unavailable {
		return err
	}
	return fmt.Errorf("%s %s unreachable (if it was lost, the shuffle failed: run it again): %w", role, addr, err)
}

func dialAll(addrs []string) ([]*Client, error) {
	cs := make([]*Client, 0, len(addrs))
	for _, a := range addrs {
		c, err := Dial(a)
		if err != nil {
			for _, x := range cs {
				x.Close()
			}
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}
