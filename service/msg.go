package service

import (
	"encoding/json"
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/spec"
)

// maxControl bounds a decoded control message.
const maxControl = 16 << 20

// Control operations (the Op of a control message).
const (
	opCreate    = "create"    // coordinator -> members: a new shuffle
	opBegin     = "begin"     // sender -> coordinator: a task attempt starts
	opDone      = "done"      // sender -> coordinator: a task attempt finished
	opCommitted = "committed" // receiver -> coordinator: a task attempt committed
	opSeal      = "seal"      // coordinator -> members: barrier reached
	opFail      = "fail"      // coordinator -> members: shuffle failed
	opClose     = "close"     // any node -> members: free the shuffle
	opBarrier   = "barrier"   // any node -> coordinator: wait for the barrier
	opEpoch     = "epoch"     // coordinator -> members: nodes were lost, new ownership
)

// control is the JSON body of a wire.TypeControl frame. Fields are used by
// the operations that need them.
type control struct {
	Op          string                    `json:"op"`
	Shuffle     string                    `json:"shuffle"`
	Epoch       uint64                    `json:"epoch,omitempty"`
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
	Reason      string                    `json:"reason,omitempty"`
}

// controlReply is the JSON body of the Ack of a control message.
type controlReply struct {
	Status string   `json:"status,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Epoch  uint64   `json:"epoch,omitempty"`
	Replay []uint64 `json:"replay,omitempty"`
	// Replayed: the coordinator's replay-set size so far.
	Replayed int `json:"replayed,omitempty"`
	// Since (begin): 1 + the epoch of the done attempt a loss took back and
	// this attempt replays; 0 when there is none. Receivers of then that
	// still hold a partition keep that attempt's rows of it.
	Since uint64 `json:"since,omitempty"`
}

// decodeControl decodes and checks a control body.
func decodeControl(b []byte) (*control, error) {
	if len(b) > maxControl {
		return nil, fmt.Errorf("service: control message of %d bytes over limit %d", len(b), maxControl)
	}
	var c control
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("service: control message: %w", err)
	}
	if err := spec.ValidateID(c.Shuffle); err != nil {
		return nil, fmt.Errorf("service: control %q: %w", c.Op, err)
	}
	return &c, nil
}
