package reports

import (
	"context"
	"fmt"
	"strings"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// A sender's begin and done reports are batched per (shuffle,
// coordinator): a report waits while the previous batch to that
// coordinator is in flight, then goes with every report that arrived
// meanwhile, in one control.OpTasks message whose reply answers each. A
// lone report goes as the single message it is, so a node with one put at
// a time sends what it always sent; one with many sends one request per
// round trip, not one per task. Each caller still waits for its own answer
// and retries as before.

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

// waiting reports whether c's caller still waits for its answer.
func (c *taskCall) waiting() bool {
	select {
	case <-c.gaveUp:
		return false
	default:
		return true
	}
}

// Task sends c (an OpBegin or OpDone of this node) to the coordinator
// coord of shuffle id, batched with the reports of this node's other puts,
// and returns its answer as Config.Request would: a refusal of this report
// alone is the same error a single message's refusal is.
func (r *Reporter) Task(ctx context.Context, id, coord string, c control.Msg) (control.Reply, error) {
	call := &taskCall{
		r:      control.TaskReport{Op: c.Op, Task: c.Task, Attempt: c.Attempt, Epoch: c.Epoch, Sent: c.Sent},
		gaveUp: ctx.Done(),
		out:    make(chan taskAnswer, 1),
	}
	d := taskDest{shuffle: id, coord: coord}
	if r.tasks.add(d, call) && !r.cfg.Go(func(ctx context.Context) { r.sendTasks(ctx, d) }) {
		err := fmt.Errorf("%w: shuffle %s: node %s is closing", r.cfg.Unavailable, d.shuffle, r.cfg.Node)
		for _, c := range r.tasks.abandon(d) {
			c.out <- taskAnswer{err: err}
		}
	}
	select {
	case a := <-call.out:
		return a.r, a.err
	case <-ctx.Done():
		return control.Reply{}, ctx.Err()
	}
}

// sendTasks sends d's queued reports, a batch at a time, until none is
// left, and answers each caller.
func (r *Reporter) sendTasks(ctx context.Context, d taskDest) {
	next := func() []*taskCall { return r.tasks.take(d, control.MaxTaskBatch, (*taskCall).waiting) }
	for cs := next(); cs != nil; cs = next() {
		if len(cs) == 1 {
			rep, err := r.cfg.Request(ctx, d.coord, cs[0].r.Msg(d.shuffle, r.cfg.Node))
			cs[0].out <- taskAnswer{r: rep, err: err}
			continue
		}
		r.sendTaskBatch(ctx, d, cs)
	}
}

// sendTaskBatch sends cs in one OpTasks message and answers each from its
// entry of the reply; an error of the whole request is every report's.
func (r *Reporter) sendTaskBatch(ctx context.Context, d taskDest, cs []*taskCall) {
	m := control.Msg{Op: control.OpTasks, Shuffle: d.shuffle, Node: r.cfg.Node, Tasks: make([]control.TaskReport, len(cs))}
	for i, c := range cs {
		m.Tasks[i] = c.r
	}
	r.batches.Add(1)
	r.batched.Add(int64(len(cs)))
	rep, err := r.cfg.Request(ctx, d.coord, m)
	if err == nil && len(rep.Tasks) != len(cs) {
		err = fmt.Errorf("%w: shuffle %s: node %s answered %d of %d task reports", r.cfg.Unavailable, d.shuffle, d.coord, len(rep.Tasks), len(cs))
	}
	for i, c := range cs {
		if err != nil {
			c.out <- taskAnswer{err: err}
			continue
		}
		c.out <- r.taskAnswerOf(d, &rep.Tasks[i])
	}
}

// taskAnswerOf turns a reply entry back into what a single message's reply
// would have been: a refusal becomes the error Config.Request returns for it.
func (r *Reporter) taskAnswerOf(d taskDest, t *control.TaskReply) taskAnswer {
	if t.Code == 0 {
		return taskAnswer{r: t.Reply()}
	}
	ref := &wire.Refusal{Code: wire.RefusalCode(t.Code), Reason: t.Reason}
	return taskAnswer{err: r.cfg.PeerError(d.shuffle, d.coord, ref)}
}

// AnswerTasks handles an OpTasks message at the coordinator: each report as
// the single message it stands for, each refusal in its own entry, with the
// code refused gives its error.
func AnswerTasks(coord Coordinator, co *coordinator.Shuffle, c *control.Msg, refused func(error) wire.RefusalCode) control.Reply {
	out := control.Reply{Tasks: make([]control.TaskReply, len(c.Tasks))}
	for i := range c.Tasks {
		r, err := answerTask(coord, co, c, &c.Tasks[i])
		if err != nil {
			out.Tasks[i] = control.TaskReply{Code: uint16(refused(err)), Reason: truncReason(err.Error())}
			continue
		}
		out.Tasks[i] = control.TaskReplyOf(r)
	}
	return out
}

// answerTask handles one report of an OpTasks message.
func answerTask(coord Coordinator, co *coordinator.Shuffle, c *control.Msg, t *control.TaskReport) (control.Reply, error) {
	if err := t.Check(); err != nil {
		return control.Reply{}, fmt.Errorf("%w: shuffle %s node %s: %w", shuffle.ErrBadInput, c.Shuffle, c.Node, err)
	}
	one := t.Msg(c.Shuffle, c.Node)
	if one.Op == control.OpBegin {
		return coord.Begin(co, &one)
	}
	return control.Reply{}, coord.Report(co, &one)
}

// truncReason cuts a refusal reason as a refused frame would, at a UTF-8
// boundary.
func truncReason(r string) string {
	if len(r) <= wire.MaxReasonLen {
		return r
	}
	return strings.ToValidUTF8(r[:wire.MaxReasonLen], "")
}
