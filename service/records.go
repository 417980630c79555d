package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Where the network keeps records (package record), the coordinator writes
// a shuffle's record at create and after every epoch move or takeover, and
// a member asked to move a shuffle it does not hold (it missed the create)
// installs it from the record.

// recordOf is sh's current record.
func recordOf(sh *shuffle.State) record.Record {
	rt := sh.Route()
	return record.Record{Spec: sh.Spec, Creator: sh.Creator, Members: sh.Members, Start: sh.StartEpoch(),
		Lost: rt.Lost, Epoch: rt.Epoch, Coordinator: rt.Coordinator, Term: rt.Term}
}

// recordTimeout bounds one write or read of a shuffle record.
const recordTimeout = 10 * time.Second

// publish writes sh's record in the background, where the network keeps
// records. A failed write is logged: the record is a copy, the members'
// state is the truth.
func (s *Service) publish(sh *shuffle.State) {
	recs, ok := s.net.(record.Store)
	if !ok {
		return
	}
	rec := recordOf(sh)
	s.background(func(ctx context.Context) {
		b, err := json.Marshal(rec)
		if err == nil && len(b) > record.MaxBytes {
			err = fmt.Errorf("%w: the record has %d bytes, limit %d", ErrLimit, len(b), record.MaxBytes)
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(ctx, recordTimeout)
			err = recs.PutRecord(ctx, record.Prefix+rec.Spec.ID, b)
			cancel()
		}
		if err != nil {
			s.log.Warn("writing the shuffle record", "shuffle", rec.Spec.ID, "epoch", rec.Epoch, "term", rec.Term, "err", err)
		}
	})
}

// FetchRecord reads shuffle id's record from the cluster's records.
func (s *Service) FetchRecord(ctx context.Context, id string) (*record.Record, error) {
	recs, ok := s.net.(record.Store)
	if !ok {
		return nil, fmt.Errorf("%w: %s: this network keeps no records", ErrUnknownShuffle, id)
	}
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	b, err := recs.GetRecord(ctx, record.Prefix+id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: no record: %w", ErrUnknownShuffle, id, err)
	}
	r, err := record.Decode(b)
	if err == nil {
		err = r.Check(id)
	}
	return r, err
}

// adopt installs shuffle c.Shuffle from its record, for a move (epoch or
// takeover) that reaches this node without it: it missed the create. A
// shuffle this node closed or expired stays gone.
func (s *Service) adopt(ctx context.Context, c *control.Msg) (*entry, error) {
	s.mu.RLock()
	_, gone := s.gone.why(c.Shuffle)
	s.mu.RUnlock()
	if gone || (c.Op != control.OpEpoch && c.Op != control.OpTakeover) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.shuffles[r.Spec.ID]; ok {
		return old, nil
	}
	s.shuffles[r.Spec.ID] = sh
	s.log.Warn("shuffle installed from its record (this node missed its create)", "shuffle", r.Spec.ID, "epoch", r.Epoch, "term", r.Term)
	return sh, nil
}
