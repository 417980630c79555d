package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestRunPutsTasksInBatches runs a shuffle whose tasks go several to a
// DoPut stream (one task without rows, one in several batches) and checks
// that every generated row is in exactly one partition, as with a stream
// per task.
func TestRunPutsTasksInBatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	for _, batch := range []int{1, 5, 0} {
		sp := dataframeSpec(t, "batched-"+string(rune('a'+batch)))
		sp.Tasks = 13
		gen := table.GenConfig{Rows: 5000, Seed: 3, PayloadBytes: 4}
		var want []int64
		input := func(p int) ([]arrow.Record, error) {
			if p == 4 {
				return nil, nil
			}
			rec := table.GenTask(memory.DefaultAllocator, gen, p, sp.Tasks)
			if p != 7 {
				return []arrow.Record{rec}, nil
			}
			defer rec.Release()
			h := rec.NumRows() / 2
			return []arrow.Record{rec.NewSlice(0, h), rec.NewSlice(h, rec.NumRows())}, nil
		}
		for p := range sp.Tasks {
			recs, _ := input(p)
			for _, r := range recs {
				want = appendIDs(want, r)
				r.Release()
			}
		}
		res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: []string{addr}, PutBatch: batch, Parallel: 2, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for p := range sp.Partitions {
			if err := res.Read(ctx, p, func(rec arrow.Record) error { got = appendIDs(got, rec); return nil }); err != nil {
				t.Fatal(err)
			}
		}
		res.Close(ctx)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("batch %d: %d rows out, %d in, or not the same ids", batch, len(got), len(want))
		}
	}
}

// TestPutTasksAnswersEachTask sends a put of several tasks by hand: a task
// whose declared rows are wrong, and one out of range (refused before it
// reads its batches), fail alone (InvalidArgument), the others are put; the same attempts again are refused as already run, a new
// attempt of a done task is skipped; a stream whose first batch has no tag,
// or that tags a task twice, ends with InvalidArgument.
func TestPutTasksAnswersEachTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	sp := dataframeSpec(t, "tags")
	sp.Tasks = 3
	c := createOn(ctx, t, addr, sp)
	gen := table.GenConfig{Rows: 300, Seed: 1, PayloadBytes: 4}
	rec := func(task int) arrow.Record {
		return table.GenTask(memory.DefaultAllocator, gen, task%sp.Tasks, sp.Tasks)
	}
	tags := []flightproto.PutTag{{Task: 0, Rows: 100}, {Task: 99}, {Task: 1, Rows: 99}, {Task: 2, Rows: 100}}
	replies, err := rawPutTasks(ctx, addr, sp.ID, tags, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 4 || replies[0].Code != 0 || replies[0].Rows != 100 || replies[2].Code != 0 ||
		codes.Code(replies[1].Code) != codes.InvalidArgument || codes.Code(replies[3].Code) != codes.InvalidArgument {
		t.Fatalf("replies %+v: want tasks 0 and 2 put, 1 (wrong rows) and 99 (out of range) refused", replies)
	}
	out, err := c.PutTasks(ctx, sp.ID, table.GenSchema(), []client.TaskPut{{Task: 0}, {Task: 1, Attempt: 1}, {Task: 2, Attempt: 1}},
		func(i int) ([]arrow.Record, error) { return []arrow.Record{rec(i)}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if status.Code(out[0].Err) != codes.AlreadyExists && !out[0].Reply.Skipped {
		t.Errorf("task 0 attempt 0 again: %+v, want refused or skipped", out[0])
	}
	if out[1].Err != nil || out[1].Reply.Rows != 100 || out[2].Err != nil || !out[2].Reply.Skipped {
		t.Errorf("outcomes %+v: want task 1 put and task 2 skipped", out)
	}
	for name, tags := range map[string][]flightproto.PutTag{"untagged": nil, "twice": {{Task: 0, Attempt: 5}, {Task: 0, Attempt: 6}}} {
		_, err := rawPutTasks(ctx, addr, sp.ID, tags, rec)
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
}

// rawPutTasks sends one batch of rec(task) per tag, tagged (with no tags:
// one batch of task 0, untagged), in a DoPut of several tasks, and returns the
// replies in task order.
func rawPutTasks(ctx context.Context, addr, id string, tags []flightproto.PutTag, rec func(int) arrow.Record) ([]flightproto.PutTaskReply, error) {
	fc, err := flightproto.Dial(addr)
	if err != nil {
		return nil, err
	}
	defer fc.Close()
	stream, err := fc.DoPut(ctx)
	if err != nil {
		return nil, err
	}
	w := flightproto.NewWriter(stream, ipc.WithSchema(table.GenSchema()))
	d, _ := json.Marshal(flightproto.PutCmd{Shuffle: id, Tasks: true})
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: d})
	sent := tags
	if tags == nil {
		sent = []flightproto.PutTag{{}}
	}
	for _, tag := range sent {
		r := rec(int(tag.Task))
		var md []byte
		if tags != nil {
			md = flightproto.EncodePutTag(tag)
		}
		err := w.WriteWithAppMetadata(r, md)
		r.Release()
		if err != nil {
			break
		}
	}
	_ = w.Close()
	_ = stream.CloseSend()
	var out []flightproto.PutTaskReply
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			slices.SortFunc(out, func(a, b flightproto.PutTaskReply) int { return int(a.Task) - int(b.Task) })
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var rep flightproto.PutTaskReply
		if err := json.Unmarshal(r.AppMetadata, &rep); err != nil {
			return out, err
		}
		out = append(out, rep)
	}
}

// createOn creates sp on the node at addr and returns a client of it,
// closed when t ends.
func createOn(ctx context.Context, t *testing.T, addr string, sp *spec.Spec) *client.Client {
	t.Helper()
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	return c
}
