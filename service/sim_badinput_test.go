package service_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/table"
)

// TestSimBadInput: each bad request fails with its sentinel, and a
// shuffle created alongside still completes exactly once.
func TestSimBadInput(t *testing.T) {
	t.Parallel()
	c := startSim(t, 3, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	bad := newFrame("bad", 4, 5, 400, 1)
	if err := c.svcs[0].Create(ctx, bad.spec()); err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	node1 := c.svcs[1]
	put := func(id string, task uint64, attempt uint32, schema *arrow.Schema, recs ...arrow.Record) error {
		_, err := node1.Put(ctx, id, task, attempt, schema, records(recs))
		return err
	}
	rec := table.GenTask(memory.DefaultAllocator, bad.gen, 0, bad.tasks)
	defer rec.Release()
	wrongRec := emptyRecord(other)
	defer wrongRec.Release()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"wrong schema", put("bad", 0, 0, other), service.ErrBadInput},
		{"wrong schema in a batch", put("bad", 0, 1, nil, wrongRec), service.ErrBadInput},
		{"task out of range", put("bad", 4, 0, nil, rec), service.ErrBadInput},
		{"unknown shuffle put", put("nope", 0, 0, nil, rec), service.ErrUnknownShuffle},
		{"unknown shuffle barrier", barrierErr(ctx, node1, "nope"), service.ErrUnknownShuffle},
		{"unknown shuffle get", node1.Get(ctx, "nope", 0, nil), service.ErrUnknownShuffle},
		{"chunk into a dataframe shuffle", putChunkErr(ctx, node1, "bad"), service.ErrBadInput},
		{"create twice", c.svcs[2].Create(ctx, bad.spec()), service.ErrExists},
		{"get before the barrier", c.owner("bad", 0).Get(ctx, "bad", 0, nil), service.ErrNotSealed},
		{"get from a node that does not own it", c.nonOwner("bad", 0).Get(ctx, "bad", 0, nil), service.ErrNotOwner},
		{"partition out of range", node1.Get(ctx, "bad", 5, nil), service.ErrBadInput},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if err := put("bad", 1, 0, nil, rec); err != nil {
		t.Fatalf("a good put after the bad ones: %v", err)
	}
	if res, err := node1.Put(ctx, "bad", 1, 0, nil, records([]arrow.Record{rec})); err != nil || !res.Skipped {
		t.Errorf("the same attempt again, once done: %+v, %v; want skipped (its task is done)", res, err)
	}
	good := newFrame("good", 6, 7, 3_000, 5)
	c.run(ctx, good.spec(), good.input())
	if d := good.expect(t).diff(c.collect(ctx, t, good)); d != "" {
		t.Fatalf("a shuffle beside the bad requests: %s", d)
	}
}

// TestSimStaleEpoch: a put that began before a node was lost and sends
// after the epoch moved fails with ErrStaleEpoch; the task then runs
// again with a new attempt and the shuffle completes exactly once.
//
// It must fail on its own node, at its next send (the splitter refuses the
// old epoch: splitter.ErrForgotten), not by sending to the lost node until
// the retries run out.
func TestSimStaleEpoch(t *testing.T) {
	t.Parallel()
	if err := runStalePut(t); !errors.Is(err, splitter.ErrForgotten) {
		t.Errorf("the stale put failed with %v, want the splitter's refusal of its epoch (ErrForgotten)", err)
	}
}

// runStalePut blocks a put of task 0 on node-1 in its input, loses node-3,
// lets the put resume, checks its error, then completes the shuffle. It
// returns the put's error.
func runStalePut(t *testing.T) error {
	c := startSim(t, 4, service.Config{}, simnet.Config{})
	ctx := testCtx(t)
	f := newFrame("stale", 4, 9, 2_000, 9)
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	started, resume := make(chan struct{}), make(chan struct{})
	recs := f.batches(0)
	defer releaseAll(recs)
	next := records(recs)
	first := true
	blocked := func() (arrow.Record, error) {
		if first {
			first = false
			close(started)
			<-resume
		}
		return next()
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.svcs[1].Put(ctx, f.id, 0, 0, nil, blocked)
		errc <- err
	}()
	<-started
	c.kill(3)
	c.awaitOwnersLive(t, f.id)
	close(resume)
	putErr := <-errc
	if !errors.Is(putErr, service.ErrStaleEpoch) {
		t.Fatalf("put across an epoch change: %v, want ErrStaleEpoch", putErr)
	}
	c.nextAttempt(f.id, 0) // attempt 0 ran
	c.settle(ctx, f.spec(), f.input(), []uint64{0, 1, 2, 3})
	if d := f.expect(t).diff(c.collect(ctx, t, f)); d != "" {
		t.Fatal(d)
	}
	return putErr
}

// records returns a next func over recs (not released).
func records(recs []arrow.Record) func() (arrow.Record, error) {
	i := 0
	return func() (arrow.Record, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	}
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func emptyRecord(schema *arrow.Schema) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	return b.NewRecord()
}

func barrierErr(ctx context.Context, s *service.Service, id string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err := s.Barrier(ctx, id)
	return err
}

func putChunkErr(ctx context.Context, s *service.Service, id string) error {
	dt, _ := rechunk.ParseDType("|u1")
	_, err := s.PutChunk(ctx, id, 0, 0, rechunk.Chunk{DType: dt, Shape: []int64{1}, Data: []byte{1}})
	return err
}

// nonOwner returns a service that does not own partition p of id.
func (c *simCluster) nonOwner(id string, p int) *service.Service {
	own := c.owner(id, p)
	for _, s := range c.svcs {
		if s != own {
			return s
		}
	}
	c.t.Fatal("one node owns everything")
	return nil
}
