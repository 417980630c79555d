package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// records yields recs one at a time, then io.EOF.
func records(recs ...arrow.Record) func() (arrow.Record, error) {
	return func() (arrow.Record, error) {
		if len(recs) == 0 {
			return nil, io.EOF
		}
		r := recs[0]
		recs = recs[1:]
		return r, nil
	}
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: got %v (code %s), want code %s", what, err, status.Code(err), code)
	}
}

// badFixture is a small shuffle on a real cluster with one client per node.
type badFixture struct {
	demo    job.DemoConfig
	sp      *spec.Spec
	gen     table.GenConfig
	clients []*client.Client
}

func newBadFixture(t *testing.T, id string) *badFixture {
	nodes := startCluster(t, 3, 64<<20)
	f := &badFixture{demo: job.DemoConfig{ID: id, Rows: 4000, Tasks: 4, Partitions: 8, PayloadBytes: 8, Seed: 3}}
	f.gen = table.GenConfig{Rows: f.demo.Rows, Seed: f.demo.Seed, KeyCardinality: 1 << 40, PayloadBytes: 8}
	var err error
	if f.sp, err = f.demo.Spec(); err != nil {
		t.Fatal(err)
	}
	f.clients = dialEach(t, nodes)
	return f
}

func (f *badFixture) task(t int) arrow.Record {
	return table.GenTask(memory.DefaultAllocator, f.gen, t, f.demo.Tasks)
}

// halfTask returns the first half of task's rows (released when t ends)
// and the task's row count.
func (f *badFixture) halfTask(t *testing.T, task int) (arrow.Record, int64) {
	full := f.task(task)
	defer full.Release()
	half := full.NewSlice(0, full.NumRows()/2)
	t.Cleanup(half.Release)
	return half, full.NumRows()
}

func (f *badFixture) put(ctx context.Context, node int, task uint64, attempt uint32, recs ...arrow.Record) (api.PutReply, error) {
	return f.clients[node].Put(ctx, api.PutCmd{Shuffle: f.sp.ID, Task: task, Attempt: attempt}, table.GenSchema(), records(recs...))
}

func TestBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newBadFixture(t, "bad")
	c0 := f.clients[0]
	if err := c0.Create(ctx, f.sp); err != nil {
		t.Fatal(err)
	}
	t.Run("duplicate create", func(t *testing.T) {
		wantCode(t, "create twice", f.clients[1].Create(ctx, f.sp), codes.AlreadyExists)
	})
	t.Run("invalid specs", func(t *testing.T) {
		bad := *f.sp
		bad.ID = "bad divisions"
		wantCode(t, "bad id", c0.Create(ctx, &bad), codes.InvalidArgument)
		bad.ID = "bad-rule"
		bad.Rule = table.Rule{Kind: table.Range, Columns: []string{"key"}, Divisions: []json.RawMessage{json.RawMessage(`"x"`)}}
		wantCode(t, "bad divisions", c0.Create(ctx, &bad), codes.InvalidArgument)
		bad.Rule = table.Rule{Kind: table.Hash, Columns: []string{"nope"}}
		wantCode(t, "unknown column", c0.Create(ctx, &bad), codes.InvalidArgument)
		bad.Rule, bad.Partitions = f.sp.Rule, 0
		wantCode(t, "zero partitions", c0.Create(ctx, &bad), codes.InvalidArgument)
	})
	t.Run("unknown shuffle", func(t *testing.T) {
		_, err := f.clients[1].Put(ctx, api.PutCmd{Shuffle: "nope", Task: 0}, table.GenSchema(), records(f.task(0)))
		wantCode(t, "put to unknown shuffle", err, codes.NotFound)
		_, err = c0.Status(ctx, "nope")
		wantCode(t, "status of unknown shuffle", err, codes.NotFound)
	})
	t.Run("wrong schema", func(t *testing.T) {
		other := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int32}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, other)
		b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 2, 3}, nil)
		rec := b.NewRecord()
		defer rec.Release()
		_, err := f.clients[1].Put(ctx, api.PutCmd{Shuffle: f.sp.ID, Task: 1}, other, records(rec))
		wantCode(t, "put with wrong schema", err, codes.InvalidArgument)
		if !strings.Contains(err.Error(), f.sp.ID) {
			t.Errorf("error %q does not name the shuffle", err)
		}
	})
	t.Run("task out of range", func(t *testing.T) {
		_, err := f.put(ctx, 1, 99, 0, f.task(0))
		wantCode(t, "task 99 of 4", err, codes.InvalidArgument)
	})
	t.Run("duplicate and retried puts", func(t *testing.T) {
		if _, err := f.put(ctx, 0, 0, 0, f.task(0)); err != nil {
			t.Fatal(err)
		}
		r, err := f.put(ctx, 0, 0, 0, f.task(0))
		if err != nil || !r.Skipped {
			t.Fatalf("the same attempt again once done (a lost reply): reply %+v err %v, want skipped", r, err)
		}
		r, err = f.put(ctx, 1, 0, 1, f.task(0))
		if err != nil || !r.Skipped {
			t.Fatalf("second attempt of a done task: reply %+v err %v, want skipped", r, err)
		}
	})
	t.Run("concurrent same attempt on two nodes", func(t *testing.T) {
		release := make(chan struct{})
		first := make(chan error, 1)
		sent := make(chan struct{})
		recs := []arrow.Record{f.task(1), f.task(1)}
		i := 0
		slow := func() (arrow.Record, error) {
			switch i++; i {
			case 1:
				return recs[0], nil
			case 2:
				close(sent)
				<-release
				return nil, io.EOF
			}
			return nil, io.EOF
		}
		go func() {
			_, err := c0.Put(ctx, api.PutCmd{Shuffle: f.sp.ID, Task: 1, Attempt: 0}, table.GenSchema(), slow)
			first <- err
		}()
		<-sent
		time.Sleep(100 * time.Millisecond) // let the server register the attempt
		_, err := f.put(ctx, 2, 1, 0, f.task(1))
		wantCode(t, "same attempt on another node", err, codes.AlreadyExists)
		close(release)
		if err := <-first; err != nil {
			t.Fatalf("first put: %v", err)
		}
	})
	t.Run("client disconnects mid-put", func(t *testing.T) {
		pctx, pcancel := context.WithCancel(ctx)
		i := 0
		next := func() (arrow.Record, error) {
			if i++; i == 1 {
				return f.task(2), nil
			}
			time.Sleep(100 * time.Millisecond)
			pcancel()
			return nil, errors.New("client gave up")
		}
		_, err := f.clients[2].Put(pctx, api.PutCmd{Shuffle: f.sp.ID, Task: 2, Attempt: 0}, table.GenSchema(), next)
		if err == nil {
			t.Fatal("a put whose client went away succeeded")
		}
		if _, err := f.put(ctx, 2, 2, 1, f.task(2)); err != nil {
			t.Fatalf("retry of an abandoned attempt: %v", err)
		}
	})
	t.Run("client input fails mid-put", func(t *testing.T) {
		// The client's next fails after half the task's rows, its context
		// still live: the put must fail on the server too, not end as a
		// finished attempt of half the rows (the full put of task 3 below
		// would then be skipped, and verify would miss rows).
		half, _ := f.halfTask(t, 3)
		i := 0
		next := func() (arrow.Record, error) {
			if i++; i == 1 {
				return half, nil
			}
			return nil, errors.New("input file unreadable")
		}
		_, err := f.clients[1].Put(ctx, api.PutCmd{Shuffle: f.sp.ID, Task: 3, Attempt: 1}, table.GenSchema(), next)
		if err == nil || !strings.Contains(err.Error(), "input file unreadable") {
			t.Fatalf("put whose input failed: %v, want the input's error", err)
		}
	})
	t.Run("stream ends short of the declared rows", func(t *testing.T) {
		// A client (or anything between it and the node) ends the stream
		// cleanly after half the rows it declared: the node must fail the
		// attempt, not take half the task for all of it.
		half, rows := f.halfTask(t, 3)
		cmd := api.PutCmd{Shuffle: f.sp.ID, Task: 3, Attempt: 2, Rows: uint64(rows)}
		_, err := f.clients[2].Put(ctx, cmd, table.GenSchema(), records(half))
		wantCode(t, "put of half its declared rows", err, codes.InvalidArgument)
		if !strings.Contains(err.Error(), "declared") || !strings.Contains(err.Error(), "task 3") {
			t.Fatalf("error does not say what was cut: %v", err)
		}
	})
	t.Run("read before barrier", func(t *testing.T) {
		eps, err := c0.Locations(ctx, f.sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		err = c0.Read(ctx, eps[0], func(arrow.Record) error { return nil })
		wantCode(t, "read before the barrier", err, codes.FailedPrecondition)
	})
	if _, err := f.put(ctx, 1, 3, 0, f.task(3)); err != nil {
		t.Fatal(err)
	}
	if r, err := c0.Barrier(ctx, f.sp.ID); err != nil || !r.Sealed {
		t.Fatalf("barrier: %+v %v (tasks 1 and 2 each have one finished attempt)", r, err)
	}
	t.Run("put after seal", func(t *testing.T) {
		// Every task has a finished attempt once sealed: a late put (a retry
		// whose first reply was lost) is done, and sends nothing.
		r, err := f.put(ctx, 1, 3, 5, f.task(3))
		if err != nil || !r.Skipped {
			t.Fatalf("put after the seal: %+v, %v; want skipped", r, err)
		}
	})
	t.Run("exactly once after all of the above", func(t *testing.T) {
		f.verify(t, ctx)
	})
	t.Run("close frees the shuffle everywhere", func(t *testing.T) {
		if err := f.clients[1].CloseShuffle(ctx, f.sp.ID); err != nil {
			t.Fatal(err)
		}
		for i, c := range f.clients {
			_, err := c.Status(ctx, f.sp.ID)
			wantCode(t, fmt.Sprintf("status on node %d after close", i), err, codes.NotFound)
		}
	})
}

// verify reads every partition through node 1 (proxying where it is not the
// owner) and checks exactly-once delivery with the independent verifier.
func (f *badFixture) verify(t *testing.T, ctx context.Context) {
	schema := table.GenSchema()
	part, err := table.NewPartitioner(schema, f.sp.Rule, f.sp.Partitions)
	if err != nil {
		t.Fatal(err)
	}
	v := job.NewVerifier(part, f.demo.Rows, 1, 0)
	for task := range f.demo.Tasks {
		if err := v.Input(f.task(task)); err != nil {
			t.Fatal(err)
		}
	}
	eps, err := f.clients[1].Locations(ctx, f.sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	for p, ep := range eps {
		ep.Addr = f.clients[1].Addr() // read through node 1: non-owned partitions are proxied
		if err := f.clients[1].Read(ctx, ep, func(r arrow.Record) error { return v.Output(p, r) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Check(); err != nil {
		t.Fatal(err)
	}
}
