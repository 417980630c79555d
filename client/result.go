package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Result is a finished (sealed) shuffle. Its reads survive the loss of a
// node: they wait for the coordinator to notice, run the tasks it asks
// for again, and read the moved partitions from their new owners.
type Result struct {
	Shuffle string
	// Endpoints are where the partitions lived when Run returned; reads
	// follow them as they move.
	Endpoints []Endpoint
	// Epoch is the shuffle's epoch: the number of nodes lost. Reads that
	// recover a loss move it on: read it once reads have returned.
	Epoch uint64
	// ReplaySet is how many finished tasks the lost nodes took with them
	// (the coordinator's replay sets; Replayed also counts failed puts).
	// Reads that recover a loss add to it.
	ReplaySet int

	clients  []*Client
	home     atomic.Int32 // index in clients of the node asked about the shuffle (follow.go)
	job      Job
	schema   *arrow.Schema // of the put streams
	attempts atomic.Int64
	replayed atomic.Int64
	avoid    []atomic.Int64 // per client: puts prefer other nodes until this time (Unix ns; see pick)
	// whyHere is, once a node refused to read an input file (Job.InputFile),
	// its error: every later put sends the records itself.
	whyHere atomic.Pointer[error]
	// revs are the clients' nodes' protocol revisions, each asked once
	// (takesTasks); 0 for a node that did not answer.
	revs    []int
	revOnce []sync.Once

	mu   sync.Mutex     // guards next, Endpoints, Epoch, ReplaySet
	next map[int]uint32 // next attempt number per task
	heal sync.Mutex     // one recovery at a time
}

// NodeReads reports whether the nodes read the input files (Job.InputFile)
// and, when they did not, the first refusal that made this client read
// them; false and nil without InputFile.
func (r *Result) NodeReads() (bool, error) {
	if r.job.InputFile == nil {
		return false, nil
	}
	if e := r.whyHere.Load(); e != nil {
		return false, *e
	}
	return true, nil
}

func (r *Result) readsOnNodes() bool { return r.whyHere.Load() == nil }

// readHere records the first refusal of a node to read an input file.
func (r *Result) readHere(err error) { r.whyHere.CompareAndSwap(nil, &err) }

// Attempts is the number of puts made (>= tasks; more if some were retried).
func (r *Result) Attempts() int64 { return r.attempts.Load() }

// Replayed is the number of task runs the coordinator asked for after the
// first round (the replay set of lost nodes, and failed puts).
func (r *Result) Replayed() int64 { return r.replayed.Load() }

// Layout returns the layout of an array shuffle (the __partitioned__ form).
func (r *Result) Layout(ctx context.Context) (flightproto.Layout, error) {
	var l flightproto.Layout
	err := r.ask(ctx, func(c *Client) (err error) {
		l, err = c.Layout(ctx, r.Shuffle)
		return err
	})
	return l, err
}

// Read streams output partition p to fn, which must not keep a record past
// its call without Retain. An error from fn ends the read with that error.
//
// If p's owner is lost, Read recovers: it waits for the coordinator to
// notice (the failure detector takes seconds), runs the replays the
// coordinator asks for (a node lost after the seal reopens the shuffle),
// and reads p from its new owner. Rows fn already had are skipped on the
// new read, so every row reaches fn once: a partition streams its rows in
// input task order, and Job.Input must give a task the same rows on every
// attempt (exactly once needs that anyway).
func (r *Result) Read(ctx context.Context, p int, fn func(arrow.Record) error) error {
	res := &resumer{fn: fn}
	return r.onOwner(ctx, p, func(c *Client, ep Endpoint) error {
		return c.Read(ctx, ep, res.try())
	})
}

// resumer hands fn every row once over several tries of a stream whose
// rows are the same on every try, however they are cut into records.
type resumer struct {
	fn        func(arrow.Record) error
	delivered int64 // rows fn took, over all tries
}

// try returns the record function of the next try: it skips the rows fn
// already had and marks fn's own errors as callerError.
func (r *resumer) try() func(arrow.Record) error {
	skip := r.delivered
	return func(rec arrow.Record) error {
		n := rec.NumRows()
		if skip >= n {
			skip -= n
			return nil
		}
		if skip > 0 {
			rec = rec.NewSlice(skip, n)
			defer rec.Release()
			skip = 0
		}
		if err := r.fn(rec); err != nil {
			return &callerError{err}
		}
		r.delivered += rec.NumRows()
		return nil
	}
}

// ReadChunk reads new chunk p of an array shuffle, recovering a lost owner
// as Read does.
func (r *Result) ReadChunk(ctx context.Context, p int) (rechunk.Chunk, error) {
	var c rechunk.Chunk
	err := r.onOwner(ctx, p, func(cl *Client, ep Endpoint) (err error) {
		c, err = cl.ReadChunk(ctx, ep)
		return err
	})
	return c, err
}

// VisitChunk reads new chunk p as ReadChunk does and hands it to fn, which
// must not keep the chunk's data past its call: its memory goes back to
// the process's buffer pool for later messages, which saves allocating
// and clearing a new buffer for every chunk read.
func (r *Result) VisitChunk(ctx context.Context, p int, fn func(rechunk.Chunk) error) error {
	var c rechunk.Chunk
	release := func() {}
	defer func() { release() }()
	err := r.onOwner(ctx, p, func(cl *Client, ep Endpoint) (err error) {
		release() // an earlier try's chunk
		c, _, release, err = cl.readChunk(ctx, ep)
		return err
	})
	if err != nil {
		return err
	}
	return fn(c)
}

// ReadLocal reads output partition p of an array shuffle whose output is
// a DAP distribution (dap.Spec): process p's local array, padding filled,
// with its dim_data. For a regular output the dim_data is block on every
// axis. The dim_data is what the node sends with the partition (checked
// against the array's shape); from a node that sends none, it is derived
// from the job's spec.
func (r *Result) ReadLocal(ctx context.Context, p int) (rechunk.Chunk, dap.Local, error) {
	var c rechunk.Chunk
	var sent []byte
	err := r.onOwner(ctx, p, func(cl *Client, ep Endpoint) (err error) {
		c, sent, _, err = cl.readChunk(ctx, ep)
		return err
	})
	if err != nil {
		return c, dap.Local{}, err
	}
	if sent == nil {
		return c, dap.Output(r.job.Spec).DimData(p), nil
	}
	l, err := dap.Decode(sent, p, c.Shape)
	if err != nil {
		return c, l, fmt.Errorf("client: shuffle %s partition %d: dim_data from the node: %w", r.Shuffle, p, err)
	}
	return c, l, nil
}

// callerError marks an error returned by the caller's function: it ends
// the read as it is.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }

// onOwner runs read against p's owner, and after a failure that a lost
// node explains, recovers and runs it again: for up to readRetry without
// progress.
func (r *Result) onOwner(ctx context.Context, p int, read func(*Client, Endpoint) error) error {
	deadline := time.Now().Add(readRetry)
	for {
		ep := r.endpoint(p)
		err := read(r.clients[p%len(r.clients)], ep)
		var ce *callerError
		if errors.As(err, &ce) {
			return ce.err
		}
		if err == nil || !recoverable(err) || time.Now().After(deadline) {
			return unreachable(err, "owner", ep.Addr)
		}
		if !sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
		replayed, herr := r.recover(ctx)
		if herr != nil {
			return fmt.Errorf("%w (reading partition %d from %s: %w)", herr, p, ep.Addr, err)
		}
		if replayed {
			deadline = time.Now().Add(readRetry)
		}
	}
}

// readRetry bounds how long a read waits for a lost owner's partitions to
// move (the failure detector takes seconds).
const readRetry = 30 * time.Second

// recoverable says whether a failed read may succeed after a recovery: the
// owner was unreachable or went away mid-stream, or the shuffle is not
// sealed (a loss after the seal reopened it).
func recoverable(err error) bool {
	return retryable(err) || status.Code(err) == codes.FailedPrecondition
}

// recover brings the shuffle back to sealed after a loss, one caller at a
// time: it waits at the barrier, runs the replays the coordinator asks for
// until the shuffle seals again, and refreshes the partitions' locations.
// It reports whether it ran any replay. Its error means reads cannot
// succeed (the shuffle failed, or the coordinator is gone).
func (r *Result) recover(ctx context.Context) (bool, error) {
	r.heal.Lock()
	defer r.heal.Unlock()
	before := r.replayed.Load()
	if err := r.settle(ctx, nil); err != nil {
		return false, err
	}
	eps, err := r.locations(ctx)
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	r.Endpoints = eps
	r.mu.Unlock()
	return r.replayed.Load() > before, nil
}

// locations asks where the partitions live now.
func (r *Result) locations(ctx context.Context) ([]Endpoint, error) {
	var eps []Endpoint
	err := r.ask(ctx, func(c *Client) (err error) {
		eps, err = c.Locations(ctx, r.Shuffle)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("client: locations of %s: %w", r.Shuffle, unreachable(err, "node", r.homeAddr()))
	}
	return eps, nil
}

// setOutcome records a barrier reply's epoch and replay set.
func (r *Result) setOutcome(b flightproto.BarrierReply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Epoch, r.ReplaySet = b.Epoch, b.ReplaySet
}

// endpoint returns where p lives as last known.
func (r *Result) endpoint(p int) Endpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Endpoints[p]
}

// Close closes the shuffle on the cluster and the connections.
func (r *Result) Close(ctx context.Context) error {
	err := r.ask(ctx, func(c *Client) error { return c.CloseShuffle(ctx, r.Shuffle) })
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
