package control

import (
	"encoding/json"
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/spec"
)

// maxControl bounds a decoded control message.
const maxControl = 16 << 20

// Control operations (the Op of a Msg).
const (
	OpCreate    = "create"    // coordinator -> members: a new shuffle
	OpBegin     = "begin"     // sender -> coordinator: a task attempt starts
	OpDone      = "done"      // sender -> coordinator: a task attempt finished
	OpCommitted = "committed" // receiver -> coordinator: a task attempt committed
	OpSeal      = "seal"      // coordinator -> members: barrier reached
	OpFail      = "fail"      // coordinator -> members: shuffle failed
	OpClose     = "close"     // any node -> members: free the shuffle
	OpBarrier   = "barrier"   // any node -> coordinator: wait for the barrier
	OpEpoch     = "epoch"     // coordinator -> members: nodes were lost, new ownership
	OpTakeover  = "takeover"  // successor -> members: the coordinator was lost, I coordinate; reply with your facts
	OpPing      = "ping"      // successor -> members: do you answer? (before a takeover; changes nothing)
	OpCheck     = "check"     // member -> candidates: is the shuffle open, and am I (Node) still in it?
	OpAbort     = "abort"     // member -> coordinator: I (Node) cannot go on with the shuffle (Reason, e.g. my spill disk is full): fail it
	OpRestarted = "restarted" // member -> coordinator: I (Node) restarted and hold no state of the shuffle: declare me lost
	// OpHandOver: member -> coordinator: I (Node) drain: move the epoch
	// without me and replay nothing I committed; I copy it to the new
	// owners. The reply's Epoch is the new epoch.
	OpHandOver = "handover"
	// OpHandedOver: member -> coordinator: my (Node's) handover ended:
	// every partition is committed at its new owner, or, with a Reason,
	// it failed and what I held must replay.
	OpHandedOver = "handed-over"
)

// Msg is a control message: the JSON body of a wire.TypeControl frame. Fields are used by
// the operations that need them.
type Msg struct {
	Op          string                    `json:"op"`
	Shuffle     string                    `json:"shuffle"`
	Epoch       uint64                    `json:"epoch,omitempty"` // epoch, seal: the epoch moved to, sealed in
	Term        uint64                    `json:"term,omitempty"`  // seal, fail, epoch, takeover: the coordinator's term
	Lost        []string                  `json:"lost,omitempty"`
	Reopen      bool                      `json:"reopen,omitempty"` // epoch: the seal was undone
	Spec        *spec.Spec                `json:"spec,omitempty"`
	Coordinator string                    `json:"coordinator,omitempty"`
	Members     []string                  `json:"members,omitempty"`
	Node        string                    `json:"node,omitempty"`
	Task        uint64                    `json:"task,omitempty"`
	Attempt     uint32                    `json:"attempt,omitempty"`
	Sent        map[string]barrier.Totals `json:"sent,omitempty"`
	Held        *barrier.Totals           `json:"held,omitempty"`
	// Differs (committed): the receiver found that this attempt, a replay,
	// produced other rows than the attempt that committed one of its
	// partitions first; says which (task, partition, attempts, rows). On
	// a fail decision: the shuffle failed for that reason.
	Differs string `json:"differs,omitempty"`
	// Commits (committed): a batch of the commits of Node as a receiver,
	// each with its own task, attempt, epoch and totals, in place of Task,
	// Attempt, Epoch and Held (one message for many tasks).
	Commits []Committed `json:"commits,omitempty"`
	// Tasks (tasks): begins and dones of many task attempts of Node.
	Tasks  []TaskReport `json:"tasks,omitempty"`
	Reason string       `json:"reason,omitempty"`
}

// Reply is the JSON body of the Ack of a Msg.
type Reply struct {
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	Epoch  uint64 `json:"epoch,omitempty"`
	// Term (check): the answering coordinator's term.
	Term uint64 `json:"term,omitempty"`
	// Lost (check): the lost list of the answering coordinator's epoch.
	Lost   []string `json:"lost,omitempty"`
	Replay []uint64 `json:"replay,omitempty"`
	// Replayed: the coordinator's replay-set size so far.
	Replayed int `json:"replayed,omitempty"`
	// Since (begin): 1 + the epoch of the done attempt a loss took back and
	// this attempt replays; 0 when there is none. Receivers of then that
	// still hold a partition keep that attempt's rows of it.
	Since uint64 `json:"since,omitempty"`
	// Facts (takeover): what the member did in the shuffle so far.
	Facts *Facts `json:"facts,omitempty"`
	// Tasks (tasks): one entry per report of Msg.Tasks, in order.
	Tasks []TaskReply `json:"tasks,omitempty"`
}

// Facts are what one member tells a new coordinator (control.OpTakeover) so
// it can rebuild the barrier: the attempts it finished as a sender and the
// attempts it committed as a receiver.
type Facts struct {
	Sent []Finished  `json:"sent,omitempty"`
	Held []Committed `json:"held,omitempty"`
}

// Finished is an attempt a member finished as a sender: every receiver of
// its epoch acknowledged its end marker. Sent is what it sent each.
type Finished struct {
	Task    uint64                    `json:"task"`
	Attempt uint32                    `json:"attempt"`
	Epoch   uint64                    `json:"epoch"`
	Sent    map[string]barrier.Totals `json:"sent,omitempty"`
}

// Committed is an attempt a member committed as a receiver, holding Held.
type Committed struct {
	Task    uint64         `json:"task"`
	Attempt uint32         `json:"attempt"`
	Epoch   uint64         `json:"epoch"`
	Held    barrier.Totals `json:"held"`
	// Differs: as Msg.Differs, for this commit.
	Differs string `json:"differs,omitempty"`
}

// Decode decodes and checks a control message body (either form: see
// Encode).
func Decode(b []byte) (*Msg, error) {
	if len(b) > maxControl {
		return nil, fmt.Errorf("%w: %d bytes over limit %d", ErrBadMsg, len(b), maxControl)
	}
	c, err := decodeBody(b)
	if err != nil {
		return nil, err
	}
	if err := spec.ValidateID(c.Shuffle); err != nil {
		return nil, fmt.Errorf("%w: op %q: %w", ErrBadMsg, c.Op, err)
	}
	if len(c.Tasks) > MaxTaskBatch {
		return nil, fmt.Errorf("%w: shuffle %s: %d task reports, over the limit %d", ErrBadMsg, c.Shuffle, len(c.Tasks), MaxTaskBatch)
	}
	c.Tasks = tasksOrNil(c.Tasks)
	if len(c.Sent) == 0 {
		c.Sent = nil // "sent":{} is no totals, as in the binary form
	}
	if len(c.Commits) == 0 {
		c.Commits = nil
	}
	return c, nil
}

// decodeBody decodes either form (see Encode).
func decodeBody(b []byte) (*Msg, error) {
	if len(b) > 0 && b[0] == binaryMagic {
		return decodeBinary(b[1:])
	}
	var c Msg
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMsg, err)
	}
	return &c, nil
}
