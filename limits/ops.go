package limits

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shufflenode/shufflenode/budget"
)

// OpInput is one input partition of a node-side op (Ops.Reserve) and how
// much of it the op holds at once.
type OpInput struct {
	Shuffle string
	// Copies is how many copies of the partition's bytes the op holds at
	// once: 2 for one read whole and then copied (a sort's input, sorted
	// into a new record; a join's build side, concatenated and hashed), 1
	// for one held as read (a join's lead side streamed back), 0 for one
	// streamed through a batch at a time.
	Copies int
}

// OpMemory is the memory reserved for one node-side op (Ops.Reserve). It is
// used by one goroutine: the op's.
type OpMemory struct {
	b      *budget.Budget
	n      int64
	passes int
}

// Bytes is the memory the op holds of the budget.
func (m *OpMemory) Bytes() int64 { return m.n }

// Passes is how many passes the op is to make (Ops.Reserve), each within
// what it holds.
func (m *OpMemory) Passes() int { return m.passes }

// Charge counts n more bytes without waiting: the copies of an input
// partition that the op read from another node (Reserve counted only
// this node's). The budget may be overdrawn; the next ops wait until it is
// not.
func (m *OpMemory) Charge(n int64) {
	m.b.Charge(n)
	m.n += max(n, 0)
}

// Release gives the op's memory back; later calls do nothing.
func (m *OpMemory) Release() {
	m.b.Release(m.n)
	m.n = 0
}

// Ops is a node's budget for node-side ops (joins and sorts of output
// partitions). Set its fields before the first Reserve; it is then safe
// for concurrent use.
type Ops struct {
	// Budget is the memory the ops running may hold at once.
	Budget *budget.Budget
	// Held returns the bytes this node holds of output partition p of
	// shuffle id (receiver.Receiver.PartitionBytes), or the lookup's error.
	Held func(id string, p int) (int64, error)
	// Log is where an op that waited over a second is logged.
	Log *slog.Logger
}

// Reserve waits until the budget has room for an op on partition p of its
// inputs, and reserves it: each input's Copies times the bytes this node
// holds of it (Ops.Held). An op that can run in passes (maxPasses > 1,
// a sort) and would not fit the budget in one is to make the fewest passes
// up to maxPasses that fit (OpMemory.Passes), and reserves what one pass
// holds. Inputs held elsewhere count once the op has read them
// (OpMemory.Charge). Ops are served in arrival order; one larger than the
// budget even so waits for the whole of it and runs alone. The caller must
// Release the memory. ctx's end stops the wait with an error naming the
// bytes wanted and in use.
func (o *Ops) Reserve(ctx context.Context, p, maxPasses int, inputs ...OpInput) (*OpMemory, error) {
	var want int64
	ids := make([]string, len(inputs))
	for i, in := range inputs {
		held, err := o.Held(in.Shuffle, p)
		if err != nil {
			return nil, err
		}
		want += int64(in.Copies) * held
		ids[i] = in.Shuffle
	}
	passes := passesFor(want, o.Budget.Size(), maxPasses)
	want = (want + int64(passes) - 1) / int64(passes)
	start := time.Now()
	got, err := o.Budget.Acquire(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("waiting for %d bytes of op memory (%d of %d in use): %w", want, o.Budget.Used(), o.Budget.Size(), err)
	}
	if waited := time.Since(start); waited > time.Second {
		o.Log.Info("op waited for memory", "shuffles", ids, "partition", p, "bytes", got, "budget", o.Budget.Size(), "waited", waited)
	}
	return &OpMemory{b: o.Budget, n: got, passes: passes}, nil
}

// passesFor is the fewest passes, up to limit (at least 1), in which each
// holds at most size of want bytes.
func passesFor(want, size int64, limit int) int {
	return int(max(min((want+size-1)/size, int64(limit)), 1))
}
