package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/spec"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Job is a whole shuffle for Run.
type Job struct {
	// Spec of the shuffle; it is created on Nodes[0].
	Spec *spec.Spec
	// Nodes are API addresses; input task i is put on Nodes[i % len(Nodes)].
	Nodes []string
	// Input produces input task i's records; Run releases them after the put.
	Input func(task int) ([]arrow.Record, error)
	// Parallel puts at once (default 2 per node).
	Parallel int
	// MaxAttempts per task (default 3): a put that fails with a retryable
	// code is run again with the next attempt number.
	MaxAttempts int
	// Progress, if set, is called after each task with the tasks done.
	Progress func(done, total int)
}

// Result is a finished (sealed) shuffle.
type Result struct {
	Shuffle   string
	Endpoints []Endpoint
	clients   []*Client
	attempts  atomic.Int64
}

// Attempts is the number of puts made (>= tasks; more if some were retried).
func (r *Result) Attempts() int64 { return r.attempts.Load() }

// Read streams output partition p to fn.
func (r *Result) Read(ctx context.Context, p int, fn func(arrow.Record) error) error {
	return r.clients[p%len(r.clients)].Read(ctx, r.Endpoints[p], fn)
}

// Close closes the shuffle on the cluster and the connections.
func (r *Result) Close(ctx context.Context) error {
	err := r.clients[0].CloseShuffle(ctx, r.Shuffle)
	for _, c := range r.clients {
		err = errors.Join(err, c.Close())
	}
	return err
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
	res := &Result{Shuffle: job.Spec.ID, clients: clients}
	if err := run(ctx, job, res); err != nil {
		for _, c := range clients {
			c.Close()
		}
		return nil, err
	}
	return res, nil
}

func run(ctx context.Context, job Job, res *Result) error {
	schema, err := job.Spec.ArrowSchema()
	if err != nil {
		return err
	}
	if err := res.clients[0].Create(ctx, job.Spec); err != nil {
		return fmt.Errorf("client: create %s: %w", job.Spec.ID, err)
	}
	if err := putAll(ctx, job, res, schema); err != nil {
		return err
	}
	if err := res.clients[0].Barrier(ctx, job.Spec.ID); err != nil {
		return fmt.Errorf("client: barrier of %s: %w", job.Spec.ID, err)
	}
	res.Endpoints, err = res.clients[0].Locations(ctx, job.Spec.ID)
	return err
}

// putAll puts every task with bounded parallelism; the first error stops it.
func putAll(ctx context.Context, job Job, res *Result, schema *arrow.Schema) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	par := job.Parallel
	if par <= 0 {
		par = 2 * len(job.Nodes)
	}
	tasks := make(chan int)
	var wg sync.WaitGroup
	var done atomic.Int64
	for range par {
		wg.Go(func() {
			for t := range tasks {
				if err := putTask(ctx, job, res, schema, t); err != nil {
					cancel(err)
					continue
				}
				if n := done.Add(1); job.Progress != nil {
					job.Progress(int(n), job.Spec.Tasks)
				}
			}
		})
	}
	feed(ctx, tasks, job.Spec.Tasks)
	wg.Wait()
	return context.Cause(ctx)
}

func feed(ctx context.Context, tasks chan<- int, n int) {
	defer close(tasks)
	for t := range n {
		select {
		case tasks <- t:
		case <-ctx.Done():
			return
		}
	}
}

// putTask puts task t on its node, retrying with new attempts.
func putTask(ctx context.Context, job Job, res *Result, schema *arrow.Schema, t int) error {
	c := res.clients[t%len(res.clients)]
	attempts := max(job.MaxAttempts, 1)
	if job.MaxAttempts == 0 {
		attempts = 3
	}
	var err error
	for a := range attempts {
		res.attempts.Add(1)
		if err = putOnce(ctx, job, c, schema, t, uint32(a)); err == nil || !retryable(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("client: shuffle %s task %d on %s: %w", job.Spec.ID, t, c.Addr(), err)
	}
	return nil
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

// retryable says whether a failed put may be run again as a new attempt.
func retryable(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DeadlineExceeded:
		return true
	}
	return false
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
