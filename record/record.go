package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Prefix starts the record keys of shuffles.
const Prefix = "shuffle/"

// Store is what a network may also offer: small replicated records
// (*dht.Node has them; the in-memory test network does not).
type Store interface {
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

// MaxBytes bounds an encoded shuffle record (the same as the DHT's
// bound on any record): Rank refuses a larger value before decoding
// it, and a shuffle whose record would be larger (a spec listing very many
// old locations) is not written to the records.
const MaxBytes = 1 << 20

// maxEpoch bounds a record's epoch and term (each is 32 bits of its rank).
const maxEpoch = 1<<32 - 1

// Rank is the rule of shuffle records (a dht.RecordRule's Rank for
// Prefix): the value must decode strictly and be consistent (see
// Check) and at most MaxBytes; its rank orders by term, then epoch.
// Where the records are kad-dht's, the rule is also signed
// (dht.RecordRule.Signed): a value not signed by a member never reaches it.
func Rank(key string, value []byte) (uint64, error) {
	if len(value) > MaxBytes {
		return 0, fmt.Errorf("%w: shuffle record %s has %d bytes, limit %d", shuffle.ErrBadInput, strings.TrimPrefix(key, Prefix), len(value), MaxBytes)
	}
	r, err := Decode(value)
	if err != nil {
		return 0, err
	}
	if err := r.Check(strings.TrimPrefix(key, Prefix)); err != nil {
		return 0, err
	}
	return r.Term<<32 | r.Epoch, nil
}

// Decode decodes a record, refusing unknown fields.
func Decode(b []byte) (*Record, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Record
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: shuffle record: %w", shuffle.ErrBadInput, err)
	}
	return &r, nil
}

// Check verifies that r describes shuffle id consistently: a valid spec of
// that ID, sorted unique members holding the creator and the lost, an epoch
// that counts the lost, and the coordinator and term the lost list implies.
func (r *Record) Check(id string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shuffle record %s: %s", shuffle.ErrBadInput, id, fmt.Sprintf(format, args...))
	}
	switch {
	case r.Spec == nil || r.Spec.ID != id:
		return bad("no spec of that ID")
	case len(r.Members) == 0 || !slices.IsSorted(r.Members) || len(slices.Compact(slices.Clone(r.Members))) != len(r.Members):
		return bad("members %v not sorted and unique", r.Members)
	case !slices.Contains(r.Members, r.Creator):
		return bad("creator %s is not a member", r.Creator)
	case r.Epoch != uint64(len(r.Lost)) || r.Start > r.Epoch || r.Epoch > maxEpoch:
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
