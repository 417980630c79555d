package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/failover"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/recovery"
)

// The service's side of failover: package failover drives the recovery
// core (membership, pings, takeovers, epoch moves, rejoin checks, fencing);
// this file is what it needs of the service (failoverHost) and the
// service's errors for what it found.

// failoverHost is what the failover driver needs of the service.
type failoverHost struct{ s *Service }

func (h failoverHost) Name() string { return h.s.Name() }

func (h failoverHost) Lookup(id string) (*failover.Shuffle, error) {
	sh, err := h.s.lookup(id)
	if err != nil {
		return nil, err
	}
	return sh.Shuffle, nil
}

func (h failoverHost) Held() []*failover.Shuffle {
	held := h.s.held()
	out := make([]*failover.Shuffle, len(held))
	for i, sh := range held {
		out[i] = sh.Shuffle
	}
	return out
}

// held returns the shuffles this node holds now as a member (not those
// it holds as a guest, see guest.go).
func (s *Service) held() []*entry {
	return s.shuffles.All(func(sh *entry) bool { return !s.guest(sh) })
}

func (h failoverHost) Request(ctx context.Context, node string, c control.Msg) (control.Reply, error) {
	return h.s.request(ctx, node, c)
}

func (h failoverHost) Broadcast(ctx context.Context, nodes []string, c control.Msg) error {
	return h.s.broadcast(ctx, nodes, c)
}

func (h failoverHost) Background(fn func(ctx context.Context)) { h.s.background(fn) }
func (h failoverHost) Publish(sh *failover.Shuffle)            { h.s.publish(sh.State) }
func (h failoverHost) Drop(id, reason string, left bool) error { return h.s.dropAs(id, reason, left) }
func (h failoverHost) ForgetBefore(id string, epoch uint64)    { h.s.split.ForgetBefore(id, epoch) }
func (h failoverHost) Forget(id string)                        { h.s.split.Forget(id) }

func (h failoverHost) CoordOf(sh *failover.Shuffle) (*coordinator.Shuffle, error) {
	return h.s.coordOf(&entry{Shuffle: sh})
}

// NoteMember keeps m's API address for Locations.
func (h failoverHost) NoteMember(m member.Member) {
	if m.APIAddr == "" {
		return
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.apiAddrs == nil {
		h.s.apiAddrs = map[string]string{}
	}
	h.s.apiAddrs[m.Name] = m.APIAddr
}

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
	if s.isGone(id) {
		return nil, err // closed, expired or freed here: final
	}
	r, rerr := s.FetchRecord(ctx, id)
	if rerr != nil {
		if errors.Is(rerr, ErrUnavailable) {
			return nil, fmt.Errorf("%w: ask another node", rerr)
		}
		return nil, err
	}
	why, tell := recovery.Unheld(s.Name(), &recovery.Record{Members: r.Members, Lost: r.Lost, Coordinator: r.Coordinator, Term: r.Term})
	s.log.Warn("asked about a shuffle this node does not hold: ask another node", "shuffle", id, "reason", why)
	if tell {
		s.fo.TellRestarted(id, r.Coordinator)
	}
	return nil, fmt.Errorf("%w: shuffle %s: %s; its coordinator is %s in term %d: ask another node", ErrUnavailable, id, why, r.Coordinator, r.Term)
}

// quorumErr returns an error wrapping ErrUnavailable and ErrNoQuorum when
// this node sees sh's coordinator down and too few members up for a
// takeover, as it sees them or as its last ping found them (no node of its
// side can replace the coordinator); nil otherwise.
func (s *Service) quorumErr(sh *entry) error {
	co, q, short := s.fo.NoQuorum(sh.Shuffle)
	if !short {
		return nil
	}
	return fmt.Errorf("%w: shuffle %s: node %s sees its coordinator %s down, up %d of %d members: %w",
		ErrUnavailable, sh.ID(), s.Name(), co, q.Up, q.Live, ErrNoQuorum)
}

// answerCheck handles control.OpCheck (failover.Driver.AnswerCheck): a
// closed service answers ErrClosed.
func (s *Service) answerCheck(c *control.Msg) (control.Reply, error) {
	sh, ok, tr := s.shuffles.Find(c.Shuffle, nil)
	if tr.Closed {
		return control.Reply{}, ErrClosed
	}
	var fsh *failover.Shuffle
	if ok {
		fsh = sh.Shuffle
	}
	return s.fo.AnswerCheck(c, fsh, tr.Why, tr.Gone && tr.Why == closedReason)
}

// answered reports whether a request that returned err got a reply.
func answered(err error) bool { return failover.Answered(err) }
