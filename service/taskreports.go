package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/wire"
)

// taskReports batches a sender's begin and done reports per (shuffle,
// coordinator): a report waits while the previous batch to that coordinator
// is in flight, then goes with every report that arrived meanwhile, in one
// control.OpTasks message whose reply answers each. A lone report goes as
// the single message it is, so a node with one put at a time sends what it
// always sent; one with many sends one request per round trip, not one per
// task. Each caller still waits for its own answer and retries as before.
type taskReports struct {
	mu      sync.Mutex
	pending map[taskDest][]*taskCall
	sending map[taskDest]bool
	// batches and batched count the OpTasks messages sent and the reports
	// they carried.
	batches, batched atomic.Int64
}

// taskDest is where a batch goes: one shuffle's coordinator.
type taskDest struct{ shuffle, coord string }

// taskCall is one waiting report.
type taskCall struct {
	r      control.TaskReport
	gaveUp <-chan struct{} // the caller's ctx.Done(): skip the report if closed
	out    chan taskAnswer // buffered: the sender never blocks on it
}

type taskAnswer struct {
	r   control.Reply
	err error
}

// add queues c for d and reports whether the caller must start d's sender
// (none runs).
func (q *taskReports) add(d taskDest, c *taskCall) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending, q.sending = map[taskDest][]*taskCall{}, map[taskDest]bool{}
	}
	q.pending[d] = append(q.pending[d], c)
	if q.sending[d] {
		return false
	}
	q.sending[d] = true
	return true
}

// take returns up to control.MaxTaskBatch of d's queued reports whose
// callers still wait; when none is left it returns nil and marks d's sender
// stopped.
func (q *taskReports) take(d taskDest) []*taskCall {
	q.mu.Lock()
	defer q.mu.Unlock()
	cs := q.pending[d]
	var out []*taskCall
	for len(cs) > 0 && len(out) < control.MaxTaskBatch {
		if !closed(cs[0].gaveUp) {
			out = append(out, cs[0])
		}
		cs = cs[1:]
	}
	if len(cs) > 0 {
		q.pending[d] = cs
		return out
	}
	delete(q.pending, d)
	if len(out) == 0 {
		delete(q.sending, d)
		return nil
	}
	return out
}

// abandon answers every report queued for d with err and marks d's sender
// stopped (none could be started).
func (q *taskReports) abandon(d taskDest, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.pending[d] {
		c.out <- taskAnswer{err: err}
	}
	delete(q.pending, d)
	delete(q.sending, d)
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// reportTask sends c (an OpBegin or OpDone of this node) to sh's
// coordinator, batched with the reports of this node's other puts, and
// returns its answer as s.request would: a refusal of this report alone is
// the same error a single message's refusal is.
func (s *Service) reportTask(ctx context.Context, sh *entry, c control.Msg) (control.Reply, error) {
	call := &taskCall{
		r:      control.TaskReport{Op: c.Op, Task: c.Task, Attempt: c.Attempt, Epoch: c.Epoch, Sent: c.Sent},
		gaveUp: ctx.Done(),
		out:    make(chan taskAnswer, 1),
	}
	d := taskDest{shuffle: sh.ID(), coord: sh.Coordinator()}
	if s.tasks.add(d, call) && !s.backgroundOK(func(ctx context.Context) { s.sendTasks(ctx, d) }) {
		s.tasks.abandon(d, fmt.Errorf("%w: shuffle %s: node %s is closing", ErrUnavailable, d.shuffle, s.Name()))
	}
	select {
	case a := <-call.out:
		return a.r, a.err
	case <-ctx.Done():
		return control.Reply{}, ctx.Err()
	}
}

// backgroundOK is background that says whether fn runs (not once Close
// has begun).
func (s *Service) backgroundOK(fn func(ctx context.Context)) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return false
	}
	s.bg.Go(func() { fn(s.ctx) })
	return true
}

// sendTasks sends d's queued reports, a batch at a time, until none is
// left, and answers each caller.
func (s *Service) sendTasks(ctx context.Context, d taskDest) {
	for cs := s.tasks.take(d); cs != nil; cs = s.tasks.take(d) {
		if len(cs) == 1 {
			r, err := s.request(ctx, d.coord, cs[0].r.Msg(d.shuffle, s.Name()))
			cs[0].out <- taskAnswer{r: r, err: err}
			continue
		}
		s.sendTaskBatch(ctx, d, cs)
	}
}

// sendTaskBatch sends cs in one OpTasks message and answers each from its
// entry of the reply; an error of the whole request is every report's.
func (s *Service) sendTaskBatch(ctx context.Context, d taskDest, cs []*taskCall) {
	m := control.Msg{Op: control.OpTasks, Shuffle: d.shuffle, Node: s.Name(), Tasks: make([]control.TaskReport, len(cs))}
	for i, c := range cs {
		m.Tasks[i] = c.r
	}
	s.tasks.batches.Add(1)
	s.tasks.batched.Add(int64(len(cs)))
	r, err := s.request(ctx, d.coord, m)
	if err == nil && len(r.Tasks) != len(cs) {
		err = fmt.Errorf("%w: shuffle %s: node %s answered %d of %d task reports", ErrUnavailable, d.shuffle, d.coord, len(r.Tasks), len(cs))
	}
	for i, c := range cs {
		if err != nil {
			c.out <- taskAnswer{err: err}
			continue
		}
		c.out <- s.taskAnswerOf(d, &r.Tasks[i])
	}
}

// taskAnswerOf turns a reply entry back into what a single message's reply
// would have been: a refusal becomes the error s.request returns for it.
func (s *Service) taskAnswerOf(d taskDest, t *control.TaskReply) taskAnswer {
	if t.Code == 0 {
		return taskAnswer{r: t.Reply()}
	}
	ref := &wire.Refusal{Code: wire.RefusalCode(t.Code), Reason: t.Reason}
	return taskAnswer{err: peerError(d.shuffle, d.coord, ref)}
}

// answerTasks handles an OpTasks message at the coordinator: each report as
// the single message it stands for, each refusal in its own entry.
func (s *Service) answerTasks(co *coordinator.Shuffle, c *control.Msg) control.Reply {
	out := control.Reply{Tasks: make([]control.TaskReply, len(c.Tasks))}
	for i := range c.Tasks {
		r, err := s.answerTask(co, c, &c.Tasks[i])
		if err != nil {
			s.fo.DropIfLost(c.Shuffle, err)
			out.Tasks[i] = control.TaskReply{Code: uint16(refusalCode(err)), Reason: truncReason(err.Error())}
			continue
		}
		out.Tasks[i] = control.TaskReplyOf(r)
	}
	return out
}

// answerTask handles one report of an OpTasks message.
func (s *Service) answerTask(co *coordinator.Shuffle, c *control.Msg, t *control.TaskReport) (control.Reply, error) {
	if err := t.Check(); err != nil {
		return control.Reply{}, fmt.Errorf("%w: shuffle %s node %s: %w", ErrBadInput, c.Shuffle, c.Node, err)
	}
	one := t.Msg(c.Shuffle, c.Node)
	if one.Op == control.OpBegin {
		return s.coord.Begin(co, &one)
	}
	return control.Reply{}, s.coord.Report(co, &one)
}

// truncReason cuts a refusal reason as a refused frame would, at a UTF-8
// boundary.
func truncReason(r string) string {
	if len(r) <= wire.MaxReasonLen {
		return r
	}
	return strings.ToValidUTF8(r[:wire.MaxReasonLen], "")
}
