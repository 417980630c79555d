package service

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// Location says where an output partition lives.
type Location struct {
	Partition int
	Node      string
	APIAddr   string
}

// Locations returns the owner of every output partition of shuffle id.
func (s *Service) Locations(id string) ([]Location, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	addrs := map[string]string{}
	for _, m := range s.net.Members() {
		addrs[m.Name] = m.APIAddr
	}
	r := sh.routing()
	locs := make([]Location, sh.spec.Partitions)
	for p := range locs {
		n := sh.members[r.groupOf[p]]
		locs[p] = Location{Partition: p, Node: n, APIAddr: addrs[n]}
	}
	return locs, nil
}

// Member returns the member named name as this node sees it.
func (s *Service) Member(name string) (dht.Member, bool) {
	for _, m := range s.net.Members() {
		if m.Name == name {
			return m, true
		}
	}
	return dht.Member{}, false
}

// Get reads output partition p of shuffle id from this node, which must own
// it, after the barrier. emit receives record batches in (task, attempt, seq)
// order and must Release them; an error from emit stops the read.
func (s *Service) Get(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, err := s.readable(id, p)
	if err != nil {
		return err
	}
	var batch []arrow.Record
	var rows int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		rec, err := table.Concat(s.cfg.Allocator, batch)
		releaseAll(batch)
		batch, rows = batch[:0], 0
		if err != nil {
			return err
		}
		return emit(rec)
	}
	err = s.store.Scan(id, uint32(p), func(k spill.Key, mem spill.Value, disk []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !sh.ledger.Visible(k.Task, k.Attempt, k.Partition) {
			return nil
		}
		rec, err := sh.pieceRecord(mem, disk)
		if err != nil {
			return fmt.Errorf("shuffle %s partition %d task %d on node %s: %w", id, p, k.Task, s.Name(), err)
		}
		batch, rows = append(batch, rec), rows+rec.NumRows()
		if rows >= s.cfg.OutputBatchRows {
			return flush()
		}
		return nil
	})
	if err != nil {
		releaseAll(batch)
		return err
	}
	return flush()
}

// readable checks that partition p of id can be read here.
func (s *Service) readable(id string, p int) (*shuffle, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	if p < 0 || p >= sh.spec.Partitions {
		return nil, fmt.Errorf("%w: shuffle %s: partition %d out of range 0..%d", ErrBadInput, id, p, sh.spec.Partitions-1)
	}
	if r := sh.routing(); !r.owned.Has(p) {
		return nil, fmt.Errorf("%w: shuffle %s partition %d is on node %s, not %s", ErrNotOwner, id, p, sh.members[r.groupOf[p]], s.Name())
	}
	switch ph, err := sh.state(); ph {
	case Open:
		return nil, fmt.Errorf("%w: %s", ErrNotSealed, id)
	case Failed:
		return nil, fmt.Errorf("%w: %s: %w", ErrFailed, id, err)
	}
	return sh, nil
}

// pieceRecord returns a piece as a record the caller releases.
func (sh *shuffle) pieceRecord(mem spill.Value, disk []byte) (arrow.Record, error) {
	if mem != nil {
		p := mem.(*piece)
		p.rec.Retain()
		return p.rec, nil
	}
	return sh.codec.Decode(append([]byte(nil), disk...))
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
