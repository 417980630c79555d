package limits

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/budget"
	"github.com/shufflenode/shufflenode/table"
)

// Gate bounds the memory of the record batches that the node's puts
// or reads hold at once. A put's batch read from a client's stream (its
// frame) and its rows cut into shards (the splitter's copy) live side by
// side until the shards are in the send buffers; a read's output batch is
// gathered from the partition's rows and held until it is sent. Neither is
// in the send buffers or the store, so neither was in the budget: a node
// serving many puts and reads at once held twenty of each (2026-11-28,
// ten concurrent jobs of ~50 MB on two nodes with a 128 MiB budget peaked
// at ~500 MiB each, ~220 MiB of it input batches being cut, then ~150 MiB
// output batches). A put or read reserves room for its next batch before
// it reads or gathers it, so that over the gate's size the next ones wait,
// and their clients' streams with them (gRPC flow control), instead of the
// node allocating. A batch larger than the gate is taken alone.
type Gate struct {
	b     *budget.Budget
	first int64 // the reservation of a first batch, before one was seen
}

// NewGate returns a gate of size bytes whose holds reserve first bytes
// before their first batch.
func NewGate(size, first int64) *Gate {
	return &Gate{b: budget.New(size), first: min(first, size)}
}

// Hold is what one put or read holds of its gate: the reservation for
// its current batch. Not safe for concurrent use.
type Hold struct {
	g     *Gate
	held  int64
	guess int64 // the next reservation: the last batch's cost
}

// Hold returns an empty hold of g; the caller calls Release when done.
func (g *Gate) Hold() *Hold { return &Hold{g: g, guess: g.first} }

// Wait gives back the last batch's bytes and waits for room for the next
// batch, as large as the last one. It returns ctx's error, holding
// nothing, if ctx ends first.
func (h *Hold) Wait(ctx context.Context) error {
	h.Release()
	got, err := h.g.b.Acquire(ctx, h.guess)
	h.held = got
	return err
}

// Charge records that the current batch holds cost bytes: past what is
// reserved, the gate is overdrawn and the next waits last longer.
func (h *Hold) Charge(cost int64) {
	if cost > h.held {
		h.g.b.Charge(cost - h.held)
		h.held = cost
	}
	h.guess = cost
}

// Release gives back what the current batch holds. Idempotent.
func (h *Hold) Release() {
	h.g.b.Release(h.held)
	h.held = 0
}

// Read reads a put's next batch once h has room for it, and charges
// what it holds while it is cut: its bytes as read and its rows copied
// into shards. The batch stays reserved until the next call (its rows are
// in the send buffers by then) or h's Release.
func (h *Hold) Read(ctx context.Context, next func() (arrow.Record, error)) (arrow.Record, error) {
	if err := h.Wait(ctx); err != nil {
		return nil, err
	}
	rec, err := next()
	if err == nil {
		h.Charge(2 * table.RecordBytes(rec))
	}
	return rec, err
}
