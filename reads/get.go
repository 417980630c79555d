package reads

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// Location says where an output partition lives.
type Location struct {
	Partition int
	Node      string
	APIAddr   string
}

// Locations returns the owner of every output partition of shuffle id. An
// owner that is gone but not yet declared lost (the coordinator has not
// moved the epoch, or cannot: no quorum) is given at the API address it
// last had: a read there fails as unavailable, which tells a client to
// recover and ask again, where an empty address was an error no client
// could act on (the Node conformance client failed on one).
func (r *Reader) Locations(id string) ([]Location, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for _, m := range r.cfg.Host.Members() {
		addrs[m.Name] = m.APIAddr
	}
	rt := sh.Route()
	locs := make([]Location, sh.Spec.Partitions)
	for p := range locs {
		n := sh.Members[rt.GroupOf[p]]
		addr := addrs[n]
		if addr == "" {
			addr = r.cfg.Host.LastAPIAddr(n)
		}
		locs[p] = Location{Partition: p, Node: n, APIAddr: addr}
	}
	return locs, nil
}

// Get reads output partition p of shuffle id from this node, which must own
// it, after the barrier. emit receives record batches of about
// OutputBatchRows rows, in (task, attempt, seq) order, and must Release
// them; an error from emit stops the read.
func (r *Reader) Get(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return err
	}
	return r.cfg.Receiver.Get(ctx, sh, p, emit)
}

// GetPooled is Get with batches whose buffers go back to a pool when they
// are released: emit takes each batch over and must release it only once
// nothing reads its buffers (see receiver.Receiver.GetPooled).
func (r *Reader) GetPooled(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return err
	}
	h := r.cfg.Outputs.Hold()
	defer h.Release()
	if err := h.Wait(ctx); err != nil {
		return err
	}
	return r.cfg.Receiver.GetPooled(ctx, sh, p, func(rec arrow.Record) error {
		h.Charge(table.RecordBytes(rec))
		err := emit(rec)
		if err == nil {
			err = h.Wait(ctx)
		}
		return err
	})
}

// GatherPartition appends the rows of output partition p of shuffle id,
// which this node must own, to g as ranges for the caller to gather into
// a packed batch (receiver.Receiver.GatherPartition: ok is false, and g
// unchanged, for a partition larger than maxRows rows or maxBytes bytes,
// which the caller reads with GetPooled). Like GetPooled, it waits for
// room under the outputs' bound first and charges the partition's bytes
// while it gathers.
func (r *Reader) GatherPartition(ctx context.Context, id string, p int, g *receiver.Gather, maxRows, maxBytes int64) (bool, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return false, err
	}
	h := r.cfg.Outputs.Hold()
	defer h.Release()
	if err := h.Wait(ctx); err != nil {
		return false, err
	}
	before := g.Bytes()
	ok, err := r.cfg.Receiver.GatherPartition(ctx, sh, p, g, maxRows, maxBytes)
	h.Charge(g.Bytes() - before)
	return ok, err
}

// GetChunk assembles new chunk p (C-order index into the new grid) of an
// array shuffle on its owner, after the barrier: every committed piece is
// placed straight into one buffer of the chunk's final size. A missing or
// misfit piece is an error naming it: nothing is filled in silently.
func (r *Reader) GetChunk(ctx context.Context, id string, p int) (rechunk.Chunk, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	return r.cfg.Receiver.GetChunk(ctx, sh, p)
}

// PartitionBytes returns the bytes this node holds of output partition p
// of shuffle id (receiver.Receiver.PartitionBytes).
func (r *Reader) PartitionBytes(id string, p int) (int64, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return 0, err
	}
	return r.cfg.Receiver.PartitionBytes(sh, p), nil
}

// Kind returns the kind of shuffle id (cheap: no lock on the shuffle).
func (r *Reader) Kind(id string) (spec.Kind, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return "", err
	}
	return sh.Spec.Kind, nil
}

// Schema returns the Arrow schema of dataframe shuffle id.
func (r *Reader) Schema(id string) (*arrow.Schema, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return nil, err
	}
	if sh.Schema == nil {
		return nil, fmt.Errorf("%w: shuffle %s is an array rechunk: it has no table schema", shuffle.ErrBadInput, id)
	}
	return sh.Schema, nil
}
