package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
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
	why, tell := recovery.Unheld(s.Name(), &recovery.Record{Members: r.Members, Lost: r.Lost, Coordinator: r.Coordinator, Term: r.Term})
	s.log.Warn("asked about a shuffle this node does not hold: ask another node", "shuffle", id, "reason", why)
	if tell {
		s.tellRestarted(id, r.Coordinator)
	}
	return nil, fmt.Errorf("%w: shuffle %s: %s; its coordinator is %s in term %d: ask another node", ErrUnavailable, id, why, r.Coordinator, r.Term)
}

// tellRestarted tells coordinator co, in the background, that this node
// restarted and holds no state of shuffle id (control.OpRestarted).
func (s *Service) tellRestarted(id, co string) {
	s.background(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, checkTimeout)
		defer cancel()
		_, err := s.request(ctx, co, control.Msg{Op: control.OpRestarted, Shuffle: id, Node: s.Name()})
		if err != nil {
			s.log.Warn("telling the coordinator this node restarted", "shuffle", id, "peer", co, "err", err)
		}
	})
}

// restarted handles control.OpRestarted on sh's coordinator: member from
// restarted and holds no state of sh, so what it held is gone. It is
// declared lost (in the background, as a failure would be): a new epoch
// without it, and the replays of what it held. A member already lost, or
// one that names another node than itself, changes nothing.
func (s *Service) restarted(sh *entry, c *control.Msg, from string) (control.Reply, error) {
	co, err := s.coordOf(sh)
	if err != nil {
		return control.Reply{}, err
	}
	if c.Node != from {
		return control.Reply{}, shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("%w: shuffle %s: node %s says node %s restarted", ErrBadInput, sh.ID(), from, c.Node))
	}
	if !slices.Contains(sh.Route().Live, from) {
		return control.Reply{}, nil
	}
	s.log.Warn("member restarted without its state: declaring it lost", "shuffle", sh.ID(), "peer", from)
	s.background(func(ctx context.Context) {
		sh.failover.Lock()
		defer sh.failover.Unlock()
		if slices.Contains(sh.Route().Live, from) {
			s.coord.Lose(ctx, co, from)
			s.publish(sh)
		}
	})
	return control.Reply{}, nil
}
