package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Where the network keeps records (kad-dht on a real cluster: Records), a
// shuffle's state is also a record under RecordPrefix + its ID: its spec,
// pinned members and creator, and its lost list with the coordinator and
// term they imply. The coordinator writes it at create and after every
// epoch move or takeover; RecordRank is the strict rule every node applies
// to it (well-formed, consistent, the highest term and then epoch wins). A
// member asked to move a shuffle it does not hold (it missed the create)
// installs it from the record.

// RecordPrefix starts the record keys of shuffles.
const RecordPrefix = "shuffle/"

// Records is what a Network may also offer: small replicated records
// (*dht.Node has them; the in-memory test network does not).
type Records interface {
	// PutRecord stores value under key on this node and the closest members.
	PutRecord(ctx context.Context, key string, value []byte) error
	// GetRecord returns the selected value under key, or an error.
	GetRecord(ctx context.Context, key string) ([]byte, error)
}

// Record is a shuffle's state as the cluster's records keep it.
type Record struct {
	Spec        *spec.Spec `json:"spec"`
	Creator     string     `json:"creator"`
	Members     []string   `json:"members"` // pinned, sorted
	Start       uint64     `json:"start"`   // the epoch the shuffle started in
	Lost        []string   `json:"lost,omitempty"`
	Epoch       uint64     `json:"epoch"`
	Coordinator string     `json:"coordinator"`
	Term        uint64     `json:"term"`
}

// MaxRecordBytes bounds an encoded shuffle record (the same as the DHT's
// bound on any record): RecordRank refuses a larger value before decoding
// it, and a shuffle whose record would be larger (a spec listing very many
// old locations) is not written to the records.
const MaxRecordBytes = 1 << 20

// maxRecordEpoch bounds a record's epoch and term (each is 32 bits of its rank).
const maxRecordEpoch = 1<<32 - 1

// RecordRank is the rule of shuffle records (a dht.RecordRule's Rank for
// RecordPrefix): the value must decode strictly and be consistent (see
// check) and at most MaxRecordBytes; its rank orders by term, then epoch.
// Where the records are kad-dht's, the rule is also signed
// (dht.RecordRule.Signed): a value not signed by a member never reaches it.
func RecordRank(key string, value []byte) (uint64, error) {
	if len(value) > MaxRecordBytes {
		return 0, fmt.Errorf("%w: shuffle record %s has %d bytes, limit %d", ErrBadInput, strings.TrimPrefix(key, RecordPrefix), len(value), MaxRecordBytes)
	}
	r, err := decodeRecord(value)
	if err != nil {
		return 0, err
	}
	if err := r.check(strings.TrimPrefix(key, RecordPrefix)); err != nil {
		return 0, err
	}
	return r.Term<<32 | r.Epoch, nil
}

// decodeRecord decodes a record, refusing unknown fields.
func decodeRecord(b []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: shuffle record: %w", ErrBadInput, err)
	}
	return &r, nil
}

// check verifies that r describes shuffle id consistently: a valid spec of
// that ID, sorted unique members holding the creator and the lost, an epoch
// that counts the lost, and the coordinator and term the lost list implies.
func (r *Record) check(id string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shuffle record %s: %s", ErrBadInput, id, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Spec == nil || r.Spec.ID != id:
		return bad("no spec of that ID")
	case len(r.Members) == 0 || !slices.IsSorted(r.Members) || len(slices.Compact(slices.Clone(r.Members))) != len(r.Members):
		return bad("members %v not sorted and unique", r.Members)
	case !slices.Contains(r.Members, r.Creator):
		return bad("creator %s is not a member", r.Creator)
	case r.Epoch != uint64(len(r.Lost)) || r.Start > r.Epoch || r.Epoch > maxRecordEpoch:
		return bad("epoch %d, start %d with %d lost", r.Epoch, r.Start, len(r.Lost))
	}
	for i, l := range r.Lost {
		if !slices.Contains(r.Members, l) || slices.Contains(r.Lost[:i], l) {
			return bad("lost %s is not a member or lost twice", l)
		}
	}
	if node, term, ok := shuffle.CoordinatorOf(id, r.Creator, r.Members, r.Lost); !ok || node != r.Coordinator || term != r.Term {
		return bad("coordinator %s of term %d, but the lost list makes it %s of term %d", r.Coordinator, r.Term, node, term)
	}
	if _, err := r.Spec.Precheck(); err != nil { // never plans: a record is checked on every read and write
		return bad("%v", err)
	}
	return nil
}

// recordOf is sh's current record.
func recordOf(sh *shuffle.State) Record {
	rt := sh.Route()
	return Record{Spec: sh.Spec, Creator: sh.Creator, Members: sh.Members, Start: sh.StartEpoch(),
		Lost: rt.Lost, Epoch: rt.Epoch, Coordinator: rt.Coordinator, Term: rt.Term}
}

// recordTimeout bounds one write or read of a shuffle record.
const recordTimeout = 10 * time.Second

// publish writes sh's record in the background, where the network keeps
// records. A failed write is logged: the record is a copy, the members'
// state is the truth.
func (s *Service) publish(sh *shuffle.State) {
	recs, ok := s.net.(Records)
	if !ok {
		return
	}
	rec := recordOf(sh)
	s.background(func(ctx context.Context) {
		b, err := json.Marshal(rec)
		if err == nil && len(b) > MaxRecordBytes {
			err = fmt.Errorf("%w: the record has %d bytes, limit %d", ErrLimit, len(b), MaxRecordBytes)
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(ctx, recordTimeout)
			err = recs.PutRecord(ctx, RecordPrefix+rec.Spec.ID, b)
			cancel()
		}
		if err != nil {
			s.log.Warn("writing the shuffle record", "shuffle", rec.Spec.ID, "epoch", rec.Epoch, "term", rec.Term, "err", err)
		}
	})
}

// FetchRecord reads shuffle id's record from the cluster's records.
func (s *Service) FetchRecord(ctx context.Context, id string) (*Record, error) {
	recs, ok := s.net.(Records)
	if !ok {
		return nil, fmt.Errorf("%w: %s: this network keeps no records", ErrUnknownShuffle, id)
	}
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	b, err := recs.GetRecord(ctx, RecordPrefix+id)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: no record: %w", ErrUnknownShuffle, id, err)
	}
	r, err := decodeRecord(b)
	if err == nil {
		err = r.check(id)
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
func (s *Service) installRecord(r *Record) (*entry, error) {
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
