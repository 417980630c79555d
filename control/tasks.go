package control

import (
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
)

// OpTasks (sender -> coordinator) carries the begins and dones of many task
// attempts of Node at once (Msg.Tasks); the reply has one entry per report,
// in order (Reply.Tasks). Each entry is handled exactly as the single
// OpBegin or OpDone it stands for, and refused on its own.
const OpTasks = "tasks"

// MaxTaskBatch bounds the reports of one OpTasks message (each ~100 bytes in
// JSON with a few receivers' totals: far below the control message limit).
const MaxTaskBatch = 1024

// TaskReport is one task attempt's begin or done in an OpTasks message: the
// fields of the single message it stands for.
type TaskReport struct {
	Op      string                    `json:"op"` // OpBegin or OpDone
	Task    uint64                    `json:"task"`
	Attempt uint32                    `json:"attempt"`
	Epoch   uint64                    `json:"epoch"`
	Sent    map[string]barrier.Totals `json:"sent,omitempty"` // done: what went to each receiver
}

// Msg is the single message r stands for, from node in shuffle id.
func (r *TaskReport) Msg(id, node string) Msg {
	return Msg{Op: r.Op, Shuffle: id, Node: node, Epoch: r.Epoch, Task: r.Task, Attempt: r.Attempt, Sent: r.Sent}
}

// Check refuses a report that is neither a begin nor a done.
func (r *TaskReport) Check() error {
	if r.Op != OpBegin && r.Op != OpDone {
		return fmt.Errorf("%w: task %d attempt %d: op %q in a batch of task reports", ErrBadMsg, r.Task, r.Attempt, r.Op)
	}
	return nil
}

// TaskReply answers one TaskReport: a refusal (Code, a wire.RefusalCode,
// not 0, with the reason in Reason) or the reply the single message would
// have had (Status, Reason, Since).
type TaskReply struct {
	Code   uint16 `json:"code,omitempty"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	Since  uint64 `json:"since,omitempty"`
}

// Reply is the reply of the single message, for an entry that is no
// refusal.
func (r *TaskReply) Reply() Reply {
	return Reply{Status: r.Status, Reason: r.Reason, Since: r.Since}
}

// TaskReplyOf is the entry for a single message's reply.
func TaskReplyOf(r Reply) TaskReply {
	return TaskReply{Status: r.Status, Reason: r.Reason, Since: r.Since}
}

// tasksOrNil makes decoded reports compare equal to what they encode to:
// an empty batch ("tasks":[]) or totals map ("sent":{}) is none.
func tasksOrNil(ts []TaskReport) []TaskReport {
	if len(ts) == 0 {
		return nil
	}
	for i := range ts {
		if len(ts[i].Sent) == 0 {
			ts[i].Sent = nil
		}
	}
	return ts
}
