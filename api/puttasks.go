package api

// A DoPut of several input tasks (flightproto.PutCmd.Tasks): the batches
// of one task after another, each task's first batch tagged with its
// flightproto.PutTag. One stream for a batch of small tasks saves what a
// stream per task costs (its call, descriptor and schema, and on the node
// a handler and a reader), which dominated the node's CPU with thousands of
// small tasks.
//
// The node feeds the tasks' rows to their puts in stream order, one task
// at a time, since the reader's batches are valid only until the next;
// when the next task's tag arrives, the previous task's input ends and its
// put goes on (end markers, done report) beside the next one's, up to
// putTasksInFlight tasks at once. Each task is then exactly the put of its
// own DoPut: the same checks, attempts and replies, one PutTaskReply each
// as it finishes. A task that fails answers with its status; the others go
// on. An error of the stream itself (or a bad tag) ends the call with its
// status, and a task that was not answered by then did not finish: run it
// again with a new attempt.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/flight"
	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// putTasksInFlight bounds the tasks of one DoPut whose puts run at once:
// one being fed, the others sending their end markers and done reports.
const putTasksInFlight = 32

// putTasks runs the tasks of a DoPut of several tasks (cmd.Tasks) read
// from rdr, and answers each on stream.
func (s *Server) putTasks(stream flight.FlightService_DoPutServer, rdr *flightproto.Reader, cmd flightproto.PutCmd) error {
	if s.isArray(cmd.Shuffle) || cmd.File != "" {
		return status.Errorf(codes.InvalidArgument, "put: shuffle %s: a put of several tasks takes dataframe batches from the stream only", cmd.Shuffle)
	}
	r := &taskRun{s: s, stream: stream, cmd: cmd, schema: rdr.Schema(), seen: map[uint64]bool{},
		slots: make(chan struct{}, putTasksInFlight)}
	err := r.read(stream.Context(), rdr)
	r.cur.end(err)
	r.wg.Wait()
	return err
}

// taskRun is one DoPut of several tasks.
type taskRun struct {
	s      *Server
	stream flight.FlightService_DoPutServer
	cmd    flightproto.PutCmd
	schema *arrow.Schema
	seen   map[uint64]bool
	cur    *taskFeed // the task being fed (nil before the first tag)
	slots  chan struct{}
	wg     sync.WaitGroup
	sendMu sync.Mutex // one Send at a time
}

// read hands every batch of rdr to its task's put, starting a task at each
// tag; it returns the status that ends the call (nil: the stream ended).
func (r *taskRun) read(ctx context.Context, rdr *flightproto.Reader) error {
	for rdr.Next() {
		if md := rdr.LatestAppMetadata(); len(md) > 0 {
			if err := r.start(ctx, md); err != nil {
				return err
			}
		}
		if r.cur == nil {
			return status.Errorf(codes.InvalidArgument, "put: shuffle %s: the first batch of a put of several tasks carries no task tag", r.cmd.Shuffle)
		}
		if rdr.Record().NumRows() > 0 {
			r.cur.give(rdr.Record())
		}
	}
	if err := rdr.Err(); err != nil {
		return toStatus(streamErr(fmt.Sprintf("put of several tasks of shuffle %s", r.cmd.Shuffle), err))
	}
	return nil
}

// start ends the current task's input and starts the task tagged md, once
// fewer than putTasksInFlight run.
func (r *taskRun) start(ctx context.Context, md []byte) error {
	tag, err := flightproto.DecodePutTag(md)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "put: shuffle %s: %v", r.cmd.Shuffle, err)
	}
	if r.seen[tag.Task] || len(r.seen) >= flightproto.MaxPutTasks {
		return status.Errorf(codes.InvalidArgument, "put: shuffle %s: task %d is tagged twice in one put, or the put has more than %d tasks",
			r.cmd.Shuffle, tag.Task, flightproto.MaxPutTasks)
	}
	r.seen[tag.Task] = true
	r.cur.end(nil)
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
	r.cur = newTaskFeed()
	r.wg.Add(1)
	go r.run(ctx, tag, r.cur)
	return nil
}

// run puts one task, fed by f, and answers it.
func (r *taskRun) run(ctx context.Context, tag flightproto.PutTag, f *taskFeed) {
	defer r.wg.Done()
	defer func() { <-r.slots }()
	defer close(f.done)
	cmd := flightproto.PutCmd{Shuffle: r.cmd.Shuffle, Task: tag.Task, Attempt: tag.Attempt, Rows: tag.Rows}
	count := &inputCount{s: r.s, cmd: cmd, next: f.next}
	res, err := r.s.svc.Put(ctx, cmd.Shuffle, cmd.Task, cmd.Attempt, r.schema, count.nextChecked)
	reply := flightproto.PutTaskReply{Task: tag.Task, Attempt: tag.Attempt, PutReply: putReply(res, count)}
	if err != nil {
		st, _ := status.FromError(toStatus(err))
		reply.PutReply, reply.Code, reply.Error = flightproto.PutReply{}, uint32(st.Code()), st.Message()
	}
	r.answer(reply)
}

// answer sends one task's reply; a stream that broke is the call's end,
// which the reader sees.
func (r *taskRun) answer(reply flightproto.PutTaskReply) {
	b, _ := json.Marshal(reply)
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	_ = r.stream.Send(&flight.PutResult{AppMetadata: b})
}

// taskFeed hands the batches of one task, read by the call's goroutine,
// to the task's put in its own goroutine, one at a time: the reader's
// batch is valid until the next is read, so the reader waits until the put
// asks for the next one (it copied the rows) or returned.
type taskFeed struct {
	want  chan struct{}     // the put asks for its next batch
	recs  chan arrow.Record // the reader answers
	ended chan struct{}     // closed when the task's input ended
	done  chan struct{}     // closed when the put returned
	err   error             // why the input ended (nil: io.EOF), set before ended closes
	// The reader's own state.
	asked, over bool // a request was taken and not answered yet; ended is closed
}

func newTaskFeed() *taskFeed {
	return &taskFeed{want: make(chan struct{}), recs: make(chan arrow.Record), ended: make(chan struct{}), done: make(chan struct{})}
}

// next is the put's input: the task's batches, then io.EOF (or the
// stream's error).
func (f *taskFeed) next() (arrow.Record, error) {
	select {
	case f.want <- struct{}{}:
	case <-f.ended:
		return nil, f.endErr()
	}
	select {
	case rec := <-f.recs:
		return rec, nil
	case <-f.ended:
		return nil, f.endErr()
	}
}

func (f *taskFeed) endErr() error {
	if f.err != nil {
		return f.err
	}
	return io.EOF
}

// await waits until the put asks for a batch (true) or returned (false).
func (f *taskFeed) await() bool {
	if f.asked {
		return true
	}
	select {
	case <-f.want:
		f.asked = true
		return true
	case <-f.done:
		return false
	}
}

// give hands rec to the put and waits until it is done with it. A put that
// returned (it failed) drops the rest of its task's batches.
func (f *taskFeed) give(rec arrow.Record) {
	if !f.await() {
		return
	}
	f.asked = false
	f.recs <- rec
	f.await()
}

// end ends the task's input with err (nil: its end). No-op on nil or once
// ended.
func (f *taskFeed) end(err error) {
	if f == nil || f.over {
		return
	}
	f.err, f.over = err, true
	close(f.ended)
}
