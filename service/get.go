package service

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
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
func (s *Service) Locations(id string) ([]Location, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for _, m := range s.net.Members() {
		addrs[m.Name] = m.APIAddr
	}
	r := sh.Route()
	locs := make([]Location, sh.Spec.Partitions)
	for p := range locs {
		n := sh.Members[r.GroupOf[p]]
		addr := addrs[n]
		if addr == "" {
			addr = s.lastAPIAddr(n)
		}
		locs[p] = Location{Partition: p, Node: n, APIAddr: addr}
	}
	return locs, nil
}

// lastAPIAddr returns the API address node last had among the members, as
// membership events told it ("" if none did).
func (s *Service) lastAPIAddr(node string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.apiAddrs[node]
}

// Get reads output partition p of shuffle id from this node, which must own
// it, after the barrier. emit receives record batches of about
// OutputBatchRows rows, in (task, attempt, seq) order, and must Release
// them; an error from emit stops the read.
func (s *Service) Get(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, err := s.lookup(id)
	if err != nil {
		return err
	}
	return s.recv.Get(ctx, sh.recv, p, emit)
}

// GetPooled is Get with batches whose buffers go back to a pool when they
// are released: emit takes each batch over and must release it only once
// nothing reads its buffers (see receiver.Receiver.GetPooled).
func (s *Service) GetPooled(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, err := s.lookup(id)
	if err != nil {
		return err
	}
	h := s.outputs.hold()
	defer h.release()
	if err := h.wait(ctx); err != nil {
		return err
	}
	return s.recv.GetPooled(ctx, sh.recv, p, func(rec arrow.Record) error {
		h.charge(table.RecordBytes(rec))
		err := emit(rec)
		if err == nil {
			err = h.wait(ctx)
		}
		return err
	})
}
