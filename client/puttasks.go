package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TaskPut is one task attempt of a PutTasks call.
type TaskPut struct {
	Task    uint64
	Attempt uint32
}

// TaskOutcome is how one task of a PutTasks call ended: its reply, or the
// error its own Put would have returned (a gRPC status error), or, for a
// task the node never answered, the call's error.
type TaskOutcome struct {
	Reply flightproto.PutReply
	Err   error
}

// errNoReply is the outcome of a task that a call ending cleanly did not
// answer (a node that broke the protocol).
var errNoReply = status.Error(codes.Internal, "client: the node ended a put of several tasks without answering this task")

// PutTasks puts several dataframe task attempts in one DoPut stream
// (flightproto.PutCmd.Tasks; nodes from revision
// flightproto.MinPutTasksRevision on): input(i) yields tasks[i]'s records,
// asked for in order as the stream reaches them (PutTasks releases them
// once the node answered the task, or at the end of the call). Each task
// is the put its own Put would be, with its rows declared; the outcomes
// say how each ended, in tasks' order. The error is input's, which aborts
// the call (every task without an answer then has it as its outcome), or
// nil.
//
// Records go to gRPC by reference, as Put's: they must not change until
// released.
func (c *Client) PutTasks(ctx context.Context, shuffle string, schema *arrow.Schema, tasks []TaskPut, input func(i int) ([]arrow.Record, error)) ([]TaskOutcome, error) {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	p := &taskPut{tasks: tasks, out: make([]TaskOutcome, len(tasks)), answered: make([]bool, len(tasks)),
		held: make([][]arrow.Record, len(tasks)), index: make(map[uint64]int, len(tasks))}
	for i, t := range tasks {
		p.index[t.Task] = i
	}
	defer p.releaseAll()
	stream, err := c.home.pick().DoPut(ctx)
	if err != nil {
		p.fail(err)
		return p.out, nil
	}
	recvd := make(chan error, 1)
	go func() { recvd <- p.receive(stream) }()
	werr := p.send(stream, schema, shuffle, input)
	var in inputError
	if errors.As(werr, &in) {
		abort()
		<-recvd
		p.fail(in.err)
		return p.out, in.err
	}
	_ = stream.CloseSend()
	err = <-recvd
	if err == nil && werr != nil && !errors.Is(werr, io.EOF) {
		err = werr
	}
	p.fail(cmpErr(err, errNoReply))
	return p.out, nil
}

// cmpErr is err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// taskPut is the state of one PutTasks call.
type taskPut struct {
	tasks []TaskPut
	index map[uint64]int

	mu       sync.Mutex
	out      []TaskOutcome
	answered []bool
	held     [][]arrow.Record // each task's records until its answer
}

// send writes every task's records, each task's first batch tagged (an
// empty batch for a task without rows), then ends the stream. An error of
// input comes back as an inputError; io.EOF means the node ended the call.
func (p *taskPut) send(stream flight.FlightService_DoPutClient, schema *arrow.Schema, shuffle string, input func(int) ([]arrow.Record, error)) error {
	w := flightproto.NewSharingWriter(stream, ipc.WithSchema(schema))
	d, _ := json.Marshal(flightproto.PutCmd{Shuffle: shuffle, Tasks: true})
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: d})
	for i, t := range p.tasks {
		recs, err := input(i)
		if err != nil {
			return inputError{err}
		}
		if err := p.sendTask(w, schema, i, t, recs); err != nil {
			return err
		}
	}
	return w.Close()
}

// sendTask writes task i's records, the first tagged.
func (p *taskPut) sendTask(w *flightproto.Writer, schema *arrow.Schema, i int, t TaskPut, recs []arrow.Record) error {
	var rows uint64
	for _, r := range recs {
		rows += uint64(r.NumRows())
	}
	if len(recs) == 0 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		recs = []arrow.Record{b.NewRecord()}
		b.Release()
	}
	if !p.hold(i, recs) {
		return nil // cannot happen: a task is answered after its records are sent
	}
	tag := flightproto.EncodePutTag(flightproto.PutTag{Task: t.Task, Attempt: t.Attempt, Rows: rows})
	if err := w.WriteWithAppMetadata(recs[0], tag); err != nil {
		return err
	}
	for _, r := range recs[1:] {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// hold keeps task i's records until its answer; false (the records
// released) if it was answered already.
func (p *taskPut) hold(i int, recs []arrow.Record) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered[i] {
		release(recs)
		return false
	}
	p.held[i] = recs
	return true
}

// receive reads the node's answers until the call ends; it returns the
// call's status (nil: it ended cleanly).
func (p *taskPut) receive(stream flight.FlightService_DoPutClient) error {
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var rep flightproto.PutTaskReply
		if err := json.Unmarshal(r.AppMetadata, &rep); err != nil {
			return status.Errorf(codes.Internal, "client: a put's task reply: %v", err)
		}
		if err := p.answer(rep); err != nil {
			return err
		}
	}
}

// answer records one task's reply and releases its records.
func (p *taskPut) answer(rep flightproto.PutTaskReply) error {
	i, ok := p.index[rep.Task]
	if !ok || p.tasks[i].Attempt != rep.Attempt {
		return status.Errorf(codes.Internal, "client: a reply for task %d attempt %d, which this put did not send", rep.Task, rep.Attempt)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered[i] = true
	p.out[i] = TaskOutcome{Reply: rep.PutReply}
	if rep.Code != 0 {
		p.out[i] = TaskOutcome{Err: status.Error(codes.Code(rep.Code), rep.Error)}
	}
	release(p.held[i])
	p.held[i] = nil
	return nil
}

// fail gives err to every task not answered.
func (p *taskPut) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.out {
		if !p.answered[i] {
			p.answered[i] = true
			p.out[i].Err = fmt.Errorf("task %d attempt %d: %w", p.tasks[i].Task, p.tasks[i].Attempt, err)
		}
	}
}

// releaseAll releases the records of tasks not answered.
func (p *taskPut) releaseAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, recs := range p.held {
		release(recs)
		p.held[i] = nil
	}
}

func release(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
