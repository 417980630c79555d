package service

import (
	"encoding/json"
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

// Limits on decoded peer messages; a decoder never allocates past them.
const (
	maxEntries     = 1 << 20
	maxRunsPerItem = 1 << 22
	maxEnds        = 1 << 20
	maxControl     = 16 << 20
)

// shardsMsg is the body of a wire.TypeShards frame: one splitter.Batch.
//
//	shuffle string, epoch uvarint,
//	entries: count, then per entry task, attempt, seq (uvarints),
//	         runs: count, then per run partition, count (uvarints); data blob
//	ends:    count, then per end task, attempt, pieces, and totals
//	         pieces, rows, bytes, checksum (uvarints)
type shardsMsg struct {
	Shuffle string
	Epoch   uint64
	Entries []splitter.Entry
	Ends    []endMsg
}

// endMsg is an end-of-task marker as a receiver sees it.
type endMsg struct {
	Task    uint64
	Attempt uint32
	Pieces  uint32
	Totals  barrier.Totals
}

// encodeShards appends the body of a shards frame for b to dst.
func encodeShards(dst []byte, b *splitter.Batch) []byte {
	e := wire.NewEncoder(dst)
	e.String(b.Shuffle)
	e.Uvarint(b.Epoch)
	e.Uvarint(uint64(len(b.Entries)))
	for i := range b.Entries {
		encodeEntry(e, &b.Entries[i])
	}
	e.Uvarint(uint64(len(b.Ends)))
	for i := range b.Ends {
		x := &b.Ends[i]
		encodeEnd(e, endMsg{Task: x.Task, Attempt: x.Attempt, Pieces: x.Pieces, Totals: x.Totals})
	}
	return e.Bytes()
}

func encodeEntry(e *wire.Encoder, x *splitter.Entry) {
	e.Uvarint(x.Task)
	e.Uvarint(uint64(x.Attempt))
	e.Uvarint(uint64(x.Seq))
	e.Uvarint(uint64(len(x.Runs)))
	for _, r := range x.Runs {
		e.Uvarint(uint64(r.Partition))
		e.Uvarint(r.Count)
	}
	e.Blob(x.Data)
}

func encodeEnd(e *wire.Encoder, x endMsg) {
	e.Uvarint(x.Task)
	e.Uvarint(uint64(x.Attempt))
	e.Uvarint(uint64(x.Pieces))
	e.Uvarint(x.Totals.Pieces)
	e.Uvarint(x.Totals.Rows)
	e.Uvarint(x.Totals.Bytes)
	e.Uvarint(x.Totals.Checksum)
}

// decodeShards decodes a shards body. Entry data aliases b.
func decodeShards(b []byte) (*shardsMsg, error) {
	d := wire.NewDecoder(b, len(b))
	m := &shardsMsg{Shuffle: d.String(), Epoch: d.Uvarint()}
	n := d.Count(maxEntries)
	for i := 0; i < n && d.Err() == nil; i++ {
		m.Entries = append(m.Entries, decodeEntry(d))
	}
	n = d.Count(maxEnds)
	for i := 0; i < n && d.Err() == nil; i++ {
		m.Ends = append(m.Ends, decodeEnd(d))
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("service: shards message: %w", err)
	}
	return m, nil
}

func decodeEntry(d *wire.Decoder) splitter.Entry {
	x := splitter.Entry{Task: d.Uvarint(), Attempt: u32(d), Seq: u32(d)}
	n := d.Count(maxRunsPerItem)
	if n > 0 && d.Err() == nil {
		x.Runs = make([]splitter.Run, 0, min(n, d.Remaining()/2))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		x.Runs = append(x.Runs, splitter.Run{Partition: u32(d), Count: d.Uvarint()})
	}
	x.Data = d.Blob()
	return x
}

func decodeEnd(d *wire.Decoder) endMsg {
	x := endMsg{Task: d.Uvarint(), Attempt: u32(d), Pieces: u32(d)}
	x.Totals = barrier.Totals{Pieces: d.Uvarint(), Rows: d.Uvarint(), Bytes: d.Uvarint(), Checksum: d.Uvarint()}
	return x
}

// u32 reads a uvarint that must fit 32 bits.
func u32(d *wire.Decoder) uint32 {
	v := d.Uvarint()
	if v > 1<<32-1 {
		d.Count(0) // poison: a count over its limit records ErrMalformed
		return 0
	}
	return uint32(v)
}

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
