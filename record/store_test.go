package record_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
)

// memStore is a record.Store in memory.
type memStore map[string][]byte

var errNotFound = errors.New("not found")

func (m memStore) PutRecord(_ context.Context, key string, value []byte) error {
	m[key] = value
	return nil
}

func (m memStore) GetRecord(_ context.Context, key string) ([]byte, error) {
	v, ok := m[key]
	if !ok {
		return nil, errNotFound
	}
	return v, nil
}

// TestWriteRead: a record written is read back under its shuffle's key;
// a missing one is the store's error, a malformed one is bad input, and
// one over MaxBytes is not written.
func TestWriteRead(t *testing.T) {
	ctx := context.Background()
	s := memStore{}
	want := validRecord(t, "b")
	if err := record.Write(ctx, s, want); err != nil {
		t.Fatal(err)
	}
	got, err := record.Read(ctx, s, "rec")
	if err != nil || got.Epoch != 1 || got.Coordinator != want.Coordinator || got.Spec.ID != "rec" {
		t.Fatalf("Read = %+v, %v; want %+v", got, err, want)
	}
	if _, err := record.Read(ctx, s, "other"); !errors.Is(err, errNotFound) {
		t.Fatalf("Read of a missing record: %v, want the store's error", err)
	}
	s[record.Prefix+"bad"] = []byte(`{"spec":null}`)
	if _, err := record.Read(ctx, s, "bad"); !errors.Is(err, shuffle.ErrBadInput) {
		t.Fatalf("Read of a malformed record: %v, want ErrBadInput", err)
	}
	big := validRecord(t)
	big.Creator = strings.Repeat("x", record.MaxBytes)
	if err := record.Write(ctx, memStore{}, big); !errors.Is(err, shuffle.ErrBadInput) {
		t.Fatalf("Write of %d bytes: %v, want ErrBadInput", record.MaxBytes, err)
	}
}
