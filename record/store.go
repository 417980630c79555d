package record

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shufflenode/shufflenode/shuffle"
)

// Timeout bounds one write or read of a shuffle record.
const Timeout = 10 * time.Second

// Of is shuffle sh's current record.
func Of(sh *shuffle.State) Record {
	rt := sh.Route()
	return Record{Spec: sh.Spec, Creator: sh.Creator, Members: sh.Members, Start: sh.StartEpoch(),
		Lost: rt.Lost, Epoch: rt.Epoch, Coordinator: rt.Coordinator, Term: rt.Term}
}

// Write stores r in s under Prefix and its shuffle's ID, within Timeout.
// A record over MaxBytes is refused (shuffle.ErrBadInput).
func Write(ctx context.Context, s Store, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) > MaxBytes {
		return fmt.Errorf("%w: the record of shuffle %s has %d bytes, limit %d", shuffle.ErrBadInput, r.Spec.ID, len(b), MaxBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return s.PutRecord(ctx, Prefix+r.Spec.ID, b)
}

// Read returns shuffle id's record from s, within Timeout, decoded and
// checked (Check). A missing record is s's error.
func Read(ctx context.Context, s Store, id string) (*Record, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	b, err := s.GetRecord(ctx, Prefix+id)
	if err != nil {
		return nil, err
	}
	r, err := Decode(b)
	if err == nil {
		err = r.Check(id)
	}
	return r, err
}
