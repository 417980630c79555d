package service

import (
	"context"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/budget"
)

// opMemoryFactor is the memory of a node-side op per byte of its input
// partitions: the batches a read hands out, then their concatenation (a
// sort's or a join's build side) or the op's result, about as large.
const opMemoryFactor = 2

// OpMemory is the memory reserved for one node-side op (ReserveOp). It is
// used by one goroutine: the op's.
type OpMemory struct {
	b *budget.Budget
	n int64
}

// Bytes is the memory the op holds of the budget.
func (m *OpMemory) Bytes() int64 { return m.n }

// Read counts an input partition of n bytes that the op read from another
// node (ReserveOp counted only this node's), without waiting: the budget
// may be overdrawn, and the next ops wait until it is not.
func (m *OpMemory) Read(n int64) {
	m.b.Charge(opMemoryFactor * n)
	m.n += opMemoryFactor * n
}

// Release gives the op's memory back; later calls do nothing.
func (m *OpMemory) Release() {
	m.b.Release(m.n)
	m.n = 0
}

// ReserveOp waits until the node's budget for node-side ops
// (Config.OpMemory) has room for an op on partition p of shuffles ids,
// and reserves it: opMemoryFactor times the bytes of the partitions this
// node holds (receiver.PartitionBytes). Partitions held elsewhere count
// when the op has read them (OpMemory.Read). Ops are served in arrival
// order; one larger than the budget waits for the whole of it and runs
// alone. The caller must Release the memory. ctx's end stops the wait with
// an error naming the bytes wanted and in use.
func (s *Service) ReserveOp(ctx context.Context, ids []string, p int) (*OpMemory, error) {
	var want int64
	for _, id := range ids {
		sh, err := s.lookup(id)
		if err != nil {
			return nil, err
		}
		n, _ := s.recv.PartitionBytes(sh.recv, p)
		want += opMemoryFactor * n
	}
	start := time.Now()
	got, err := s.ops.Acquire(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("waiting for %d bytes of op memory (%d of %d in use): %w", want, s.ops.Used(), s.ops.Size(), err)
	}
	if waited := time.Since(start); waited > time.Second {
		s.log.Info("op waited for memory", "shuffles", ids, "partition", p, "bytes", got, "budget", s.ops.Size(), "waited", waited)
	}
	return &OpMemory{b: s.ops, n: got}, nil
}
