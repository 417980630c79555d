package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/recovery"
)

// clientLookup is lookup for a client's call about shuffle id (put,
// barrier). A shuffle this node does not hold and has no tombstone of, but
// that the cluster's records know, is answered ErrUnavailable (ask another
// node: the client moves on), not ErrUnknownShuffle, which a client takes
// as final: this node restarted with its data directory, or missed the
// create (recovery.Unheld says which).
func (s *Service) clientLookup(ctx context.Context, id string) (*entry, error) {
	sh, err := s.lookup(id)
	if !errors.Is(err, ErrUnknownShuffle) {
		return sh, err
	}
	s.mu.RLock()
	_, gone := s.gone.why(id)
	s.mu.RUnlock()
	if gone {
		return nil, err // closed, expired or freed here: final
	}
	r, rerr := s.FetchRecord(ctx, id)
	if rerr != nil {
		return nil, err
	}
	why := recovery.Unheld(s.Name(), &recovery.Record{Members: r.Members, Lost: r.Lost, Coordinator: r.Coordinator, Term: r.Term})
	s.log.Warn("asked about a shuffle this node does not hold: ask another node", "shuffle", id, "reason", why)
	return nil, fmt.Errorf("%w: shuffle %s: %s; its coordinator is %s in term %d: ask another node", ErrUnavailable, id, why, r.Coordinator, r.Term)
}
