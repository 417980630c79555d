package api

// A DoPut of several input tasks (flightproto.PutCmd.Tasks): the batches
// of one task after another (of an array shuffle, each task's one chunk
// record), each task's first batch tagged with its
// flightproto.PutTag. One stream for a batch of small tasks saves what a
// stream per task costs (its call, descriptor and schema, and on the node
// a handler and a reader), which dominated the node's CPU with thousands of
// small tasks.
//
// The node reads the stream in order and queues each task's batches for
// its put, which runs in a goroutine of its own, up to putTasksInFlight
// tasks at once (and the node's putQueueBytes of batches queued): when the next
// task's tag arrives, the previous task's input ends and its put goes on
// (cutting, end markers, done report) beside the next ones. Each task is then exactly the put of its
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

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/budget"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// putTasksInFlight bounds the tasks of one DoPut whose puts run at once
// (begin report, cutting, end markers, done report).
const putTasksInFlight = 32

// putTasks runs the tasks of a DoPut of several tasks (cmd.Tasks) read
// from rdr, and answers each on stream.
func (s *Server) putTasks(stream flight.FlightService_DoPutServer, rdr *flightproto.Reader, cmd flightproto.PutCmd) error {
	if cmd.File != "" {
		return status.Errorf(codes.InvalidArgument, "put: shuffle %s: a put of several tasks takes its tasks from the stream only", cmd.Shuffle)
	}
	r := &taskRun{s: s, stream: stream, cmd: cmd, schema: rdr.Schema(), seen: map[uint64]bool{},
		slots: make(chan struct{}, putTasksInFlight), queue: s.putQueue, array: s.isArray(cmd.Shuffle)}
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
	queue  *budget.Budget // the node's bytes of batches queued for tasks' puts (Server.putQueue)
	array  bool           // an array shuffle's: each task is one chunk record (revision 5 on)
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
		if rdr.Record().NumRows() == 0 {
			continue
		}
		if err := r.cur.give(ctx, rdr.Record()); err != nil {
			return err
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
	r.cur = newTaskFeed(r.queue)
	r.wg.Add(1)
	go r.run(ctx, tag, r.cur)
	return nil
}

// run puts one task, fed by f, and answers it.
func (r *taskRun) run(ctx context.Context, tag flightproto.PutTag, f *taskFeed) {
	defer r.wg.Done()
	defer func() { <-r.slots }()
	defer f.drain()
	cmd := flightproto.PutCmd{Shuffle: r.cmd.Shuffle, Task: tag.Task, Attempt: tag.Attempt, Rows: tag.Rows}
	count := &inputCount{s: r.s, cmd: cmd, next: f.next}
	var res service.PutResult
	var err error
	if r.array {
		res, err = r.s.putChunk(ctx, cmd, count.nextChecked)
	} else {
		res, err = r.s.svc.Put(ctx, cmd.Shuffle, cmd.Task, cmd.Attempt, r.schema, count.nextChecked)
	}
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

// taskFeed queues the batches of one task, read by the call's goroutine,
// for the task's put in its own goroutine: each batch is retained (the
// reader's pooled buffer stays the batch's until released) and counts
// against the node's queue budget until the put asks for the next one (it
// copied the rows by then). So the reader goes on to the next tasks while
// a put waits for its begin report, and the begins of a call's tasks
// overlap as their end markers do.
type taskFeed struct {
	recs   chan queued // closed at the task's end
	queue  *budget.Budget
	prev   queued // the batch the put holds
	ended  bool   // the reader's: recs is closed
	endErr error  // why the input ended (nil: io.EOF), set before recs closes
}

// queued is a retained batch and the queue bytes it holds.
type queued struct {
	rec  arrow.Record
	held int64
}

// putQueueBytes bounds the bytes of the batches that the node's puts of
// several tasks hold queued for their tasks' puts, all calls together: a
// put of one task holds one batch at a time (the node's input gate), and
// a client's many streams of many tasks must not queue more than that
// budget beside it.
const putQueueBytes = 64 << 20

func newTaskFeed(queue *budget.Budget) *taskFeed {
	return &taskFeed{recs: make(chan queued, 64), queue: queue}
}

// next is the put's input: the task's batches, then io.EOF (or the
// stream's error). It releases the batch it returned before.
func (f *taskFeed) next() (arrow.Record, error) {
	f.drop()
	q, ok := <-f.recs
	if !ok {
		if f.endErr != nil {
			return nil, f.endErr
		}
		return nil, io.EOF
	}
	f.prev = q
	return q.rec, nil
}

// drop releases the batch the put held.
func (f *taskFeed) drop() {
	if f.prev.rec != nil {
		f.prev.rec.Release()
		f.queue.Release(f.prev.held)
		f.prev = queued{}
	}
}

// drain releases what the put left: the batch it held and, until the
// task's end, the batches of a put that returned early.
func (f *taskFeed) drain() {
	f.drop()
	for q := range f.recs {
		q.rec.Release()
		f.queue.Release(q.held)
	}
}

// give queues rec (retained) for the put, once the call's queue has room.
func (f *taskFeed) give(ctx context.Context, rec arrow.Record) error {
	held, err := f.queue.Acquire(ctx, table.RecordBytes(rec))
	if err != nil {
		return status.FromContextError(err).Err()
	}
	rec.Retain()
	f.recs <- queued{rec: rec, held: held}
	return nil
}

// end ends the task's input with err (nil: its end). No-op on nil or once
// ended.
func (f *taskFeed) end(err error) {
	if f == nil || f.ended {
		return
	}
	f.endErr, f.ended = err, true
	close(f.recs)
}
