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

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/spec"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Job is a whole shuffle for Run.
type Job struct {
	// Spec of the shuffle; it is created on a node of Nodes chosen from its
	// ID, its first coordinator (the shuffles of a client spread over the
	// nodes). The barrier and locations are asked of that node, and of the
	// next ones while it cannot be reached.
	Spec *spec.Spec
	// Nodes are API addresses; attempt a of input task i is put on
	// Nodes[(i+a) % len(Nodes)], so a task whose node died runs elsewhere
	// (tasks put in batches, PutBatch: batch k on Nodes[(k+a) % len(Nodes)],
	// a the attempt of its first task).
	Nodes []string
	// PutOn, if set, says which node (an index into Nodes) holds input task
	// i: its first attempt is put there, attempt a on PutOn(i)+a. Use it with
	// Spec.OldLocations (those nodes' names) so new chunks are owned where
	// their bytes are put. nil means i.
	PutOn func(task int) int
	// Input produces input task i's records; Run releases them after the put.
	Input func(task int) ([]arrow.Record, error)
	// InputFile, if set, names input task i's Parquet file (an absolute
	// path the nodes see too) and its rows (from its footer): a put then
	// asks its node to read the file (flightproto.PutCmd.File) instead of
	// sending Input's records. A node that may not read it (no input root,
	// or outside them: PermissionDenied) makes this put and every later one
	// fall back to Input, unless FilesOnly; NodeReads tells which happened.
	InputFile func(task int) (path string, rows uint64)
	// FilesOnly makes a node's refusal to read an input file an error.
	FilesOnly bool
	// FilePut, if set, is called with the reply of each put a node made
	// from an input file.
	FilePut func(task int, reply flightproto.PutReply)
	// Parallel puts at once (default 2 per node; for an array of small old
	// chunks up to 16 per node, see Job.workers).
	Parallel int
	// PutBatch is how many tasks go in one DoPut stream (a put of several
	// tasks, flightproto.PutCmd.Tasks) to nodes that take them: 0 picks,
	// for at least 2,000 tasks put from Input without PutOn (of an array,
	// chunks of at most 1 MiB), about four batches per parallel put, at
	// most 64 tasks and 8 MiB of chunks (else 1); 1 puts every task in a
	// stream of its own. Each task of a batch is still its own attempt;
	// one that fails with a retryable code runs again on its own.
	PutBatch int
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
	// Auth is the nodes' API TLS settings and token (zero: plaintext, no
	// token).
	Auth flightproto.ClientAuth
}

// Run runs a whole shuffle and returns it sealed.
func Run(ctx context.Context, job Job) (*Result, error) {
	if len(job.Nodes) == 0 || job.Spec == nil || job.Input == nil {
		return nil, errors.New("client: Run needs a spec, nodes and an input")
	}
	schema, err := inputSchema(job.Spec)
	if err != nil {
		return nil, err
	}
	clients, err := dialAll(job.Nodes, job.Auth)
	if err != nil {
		return nil, err
	}
	res := &Result{Shuffle: job.Spec.ID, clients: clients, job: job, schema: schema, next: map[int]uint32{},
		avoid: make([]atomic.Int64, len(clients)), revs: make([]int, len(clients)), revOnce: make([]sync.Once, len(clients))}
	res.home.Store(int32(homeOf(job.Spec.ID, len(clients))))
	if err := run(ctx, job, res); err != nil {
		for _, c := range clients {
			c.Close()
		}
		return nil, err
	}
	return res, nil
}

// run creates the shuffle, then puts every task and settles it.
func run(ctx context.Context, job Job, res *Result) error {
	if err := res.create(ctx); err != nil {
		return fmt.Errorf("client: create %s: %w", job.Spec.ID, err)
	}
	tasks := make([]uint64, job.Spec.Tasks)
	for i := range tasks {
		tasks[i] = uint64(i)
	}
	if err := res.settle(ctx, tasks); err != nil {
		return err
	}
	eps, err := res.locations(ctx)
	if err != nil {
		return err
	}
	res.Endpoints = eps
	return nil
}

// settle puts tasks, then waits at the barrier and runs what the
// coordinator asks for, in rounds, until the shuffle seals.
func (r *Result) settle(ctx context.Context, tasks []uint64) error {
	rounds := cmp.Or(r.job.MaxRounds, 30)
	for round := 0; ; round++ {
		if err := putAll(ctx, r.job, r, r.schema, tasks); err != nil {
			return err
		}
		var b flightproto.BarrierReply
		err := r.ask(ctx, func(c *Client) (err error) {
			b, err = c.Barrier(ctx, r.Shuffle)
			return err
		})
		if err != nil {
			return fmt.Errorf("client: barrier of %s: %w", r.Shuffle, unreachable(err, "node", r.homeAddr()))
		}
		r.setOutcome(b)
		if b.Sealed {
			return nil
		}
		if round+1 >= rounds {
			return fmt.Errorf("client: shuffle %s not sealed after %d rounds; %d tasks still pending", r.Shuffle, rounds, len(b.Replay))
		}
		tasks = b.Replay
		r.replayed.Add(int64(len(tasks)))
		if !sleep(ctx, min(50*time.Millisecond<<round, 2*time.Second)) {
			return ctx.Err()
		}
	}
}

// create creates the shuffle on its home node or, while nodes cannot be
// reached, on the next ones in turn; the node that created it becomes its
// home. A node lost between two shuffles of a job makes every node refuse
// creates (Unavailable: a member cannot be reached) until the cluster has
// declared it lost, so rounds over the nodes go on, with back-off, for up
// to createRounds.
func (r *Result) create(ctx context.Context) error {
	n, first := len(r.clients), int(r.home.Load())
	var err error
	for round := range createRounds {
		if round > 0 && !sleep(ctx, min(50*time.Millisecond<<round, 2*time.Second)) {
			return errors.Join(err, ctx.Err())
		}
		for i := range n {
			k := (first + i) % n
			if err = r.clients[k].Create(ctx, r.job.Spec); status.Code(err) != codes.Unavailable {
				if err == nil {
					r.home.Store(int32(k))
				}
				return err
			}
		}
	}
	return unreachable(err, "node", r.clients[first].Addr())
}

// createRounds bounds create's rounds: with their back-off, about 11 s, more
// than the default failure detector takes to declare a node lost.
const createRounds = 10

// putAll puts tasks with bounded parallelism. A put that keeps failing with
// a retryable code is left for the barrier to hand back; any other error
// stops everything.
func putAll(ctx context.Context, job Job, res *Result, schema *arrow.Schema, tasks []uint64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := job.workers(len(tasks))
	ch := make(chan batched)
	var wg sync.WaitGroup
	var done atomic.Int64
	ended := func(err error) {
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
	for range workers {
		wg.Go(func() {
			for b := range ch {
				putBatched(ctx, job, res, schema, b, ended)
			}
		})
	}
	feedBatches(ctx, ch, tasks, job.putBatch(len(tasks), workers))
	wg.Wait()
	return context.Cause(ctx)
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
		n := res.pick(job.putBase(t) + int(a))
		c = res.clients[n]
		res.attempts.Add(1)
		err = putOnce(ctx, job, res, c, schema, t, a)
		res.putEnded(n, err)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("client: shuffle %s task %d on %s: %w", job.Spec.ID, t, c.Addr(), err)
	}
	return nil
}

// avoidFor is how long puts prefer other nodes to one where a put just
// failed with a retryable code. A crashed node refuses every put until the
// cluster declares it lost, and after (the client keeps its address): without
// this, every task whose turn it is pays a failed put and a back-off there.
const avoidFor = time.Second

// pick is the index of the client to put an attempt on whose turn is k: the
// k-th node round the list, or the next one that no put failed on within
// avoidFor (the k-th if every node is avoided).
func (r *Result) pick(k int) int {
	n := len(r.clients)
	first := (k%n + n) % n
	now := time.Now().UnixNano()
	for j := range n {
		if i := (first + j) % n; i >= len(r.avoid) || r.avoid[i].Load() <= now {
			return i
		}
	}
	return first
}

// putEnded records how a put on client i ended: a retryable failure makes
// later attempts avoid it for avoidFor; a success ends that at once.
func (r *Result) putEnded(i int, err error) {
	if i >= len(r.avoid) {
		return
	}
	switch {
	case err == nil:
		r.avoid[i].Store(0)
	case retryable(err):
		r.avoid[i].Store(time.Now().Add(avoidFor).UnixNano())
	}
}

// putBase is the node index of task t's first attempt.
func (job Job) putBase(t int) int {
	if job.PutOn == nil {
		return t
	}
	return job.PutOn(t)
}

// inputSchema is the schema of a shuffle's put streams: the table's for
// dataframes, flightproto.ArraySchema for arrays (one chunk record per
// task, see flightproto.ChunkRecord).
func inputSchema(sp *spec.Spec) (*arrow.Schema, error) {
	if sp.Kind == spec.Array {
		return flightproto.ArraySchema(sp.DType), nil
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

func putOnce(ctx context.Context, job Job, res *Result, c *Client, schema *arrow.Schema, t int, attempt uint32) error {
	cmd := flightproto.PutCmd{Shuffle: job.Spec.ID, Task: uint64(t), Attempt: attempt}
	if job.InputFile != nil && res.readsOnNodes() {
		cmd.File, cmd.Rows = job.InputFile(t)
		rep, err := c.Put(ctx, cmd, schema, func() (arrow.Record, error) { return nil, io.EOF })
		if err == nil && job.FilePut != nil {
			job.FilePut(t, rep)
		}
		if status.Code(err) != codes.PermissionDenied || job.FilesOnly {
			return err
		}
		res.readHere(err) // refused before anything was put: the same attempt reads here
		cmd.File, cmd.Rows = "", 0
	}
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
	var rows uint64
	for _, r := range recs {
		rows += uint64(r.NumRows())
	}
	if job.Spec.Kind != spec.Array {
		cmd.Rows = rows // the node checks it: a cut stream fails the attempt
	}
	_, err = c.Put(ctx, cmd, schema, next)
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
// role in the shuffle: "node", the last one asked about the shuffle after
// every other, or "owner"), what that means: no node answered, or an owner
// that stays unreachable was not declared lost by the cluster. The status
// code is kept (status.Code sees through the wrapping); nil stays nil.
func unreachable(err error, role, addr string) error {
	if status.Code(err) != codes.Unavailable {
		return err
	}
	why := "no node of the job could answer for the shuffle (or its coordinator and every successor were lost)"
	if role == "owner" {
		why = "and not declared lost by the cluster within " + readRetry.String()
	}
	return fmt.Errorf("%s %s unreachable (%s): %w", role, addr, why, err)
}

func dialAll(addrs []string, auth flightproto.ClientAuth) ([]*Client, error) {
	cs := make([]*Client, 0, len(addrs))
	pool := flightproto.NewPool(flightproto.PoolConfig{}) // the clients share their buffers
	for _, a := range addrs {
		c, err := dialPool(a, auth, pool)
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
