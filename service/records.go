package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// The coordinator writes a shuffle's record (package record) at create and
// after every epoch move or takeover, and a member asked to move a shuffle
// it does not hold (it missed the create) installs it from the record.

// publish writes sh's record in the background. A failed write is
// logged: the record is a copy, the members' state is the truth.
func (s *Service) publish(sh *shuffle.State) {
	rec := record.Of(sh)
	s.background(func(ctx context.Context) {
		if err := record.Write(ctx, s.net, rec); err != nil {
			s.log.Warn("writing the shuffle record", "shuffle", rec.Spec.ID, "epoch", rec.Epoch, "term", rec.Term, "err", err)
		}
	})
}

// FetchRecord reads shuffle id's record from the cluster's records. No
// record (the store asked every member) is ErrUnknownShuffle; a lookup
// that could not ask them (this node just started, a peer did not answer)
// is ErrUnavailable.
func (s *Service) FetchRecord(ctx context.Context, id string) (*record.Record, error) {
	r, err := record.Read(ctx, s.net, id)
	switch {
	case err == nil || errors.Is(err, shuffle.ErrBadInput):
		return r, err
	case errors.Is(err, wire.ErrNoRecord):
		return nil, fmt.Errorf("%w: %s: no record: %w", ErrUnknownShuffle, id, err)
	default:
		return nil, fmt.Errorf("%w: shuffle %s: node %s cannot read its record yet: %w", ErrUnavailable, id, s.Name(), err)
	}
}

// adopt installs shuffle c.Shuffle from its record, for a move (epoch or
// takeover) that reaches this node without it: it missed the create. A
// shuffle this node closed or expired stays gone.
func (s *Service) adopt(ctx context.Context, c *control.Msg) (*entry, error) {
	if s.isGone(c.Shuffle) || (c.Op != control.OpEpoch && c.Op != control.OpTakeover) {
		return nil, fmt.Errorf("%w: %s on node %s", ErrUnknownShuffle, c.Shuffle, s.Name())
	}
	r, err := s.FetchRecord(ctx, c.Shuffle)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(r.Members, s.Name()) || slices.Contains(r.Lost, s.Name()) {
		return nil, fmt.Errorf("%w: %s: node %s is not one of its live members", ErrUnknownShuffle, c.Shuffle, s.Name())
	}
	return s.installRecord(r)
}

// installRecord installs the shuffle r describes on this node, at r's epoch.
func (s *Service) installRecord(r *record.Record) (*entry, error) {
	sh, err := s.newEntry(r.Spec, r.Creator, r.Members, r.Lost[:r.Start])
	if err != nil {
		return nil, err
	}
	if r.Epoch > r.Start {
		sh.Lock()
		err = sh.MoveLocked(r.Lost)
		sh.Unlock()
	}
	if err != nil {
		return nil, err
	}
	if old, exists, _ := s.shuffles.Add(r.Spec.ID, sh, nil); exists {
		return old, nil
	}
	s.log.Warn("shuffle installed from its record (this node missed its create)", "shuffle", r.Spec.ID, "epoch", r.Epoch, "term", r.Term)
	return sh, nil
}
