package receiver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// TestHandlePayload: a payload that does not decode is refused as a bad
// request and one of a shuffle the node does not hold as unknown, storing
// nothing; good payloads are stored, and their pieces copied out, so what
// is read later does not depend on the payloads' bytes.
func TestHandlePayload(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	f.rc.cfg.Lookup = func(id string) (*Shuffle, error) {
		if id != "s" {
			return nil, fmt.Errorf("no shuffle %s", id)
		}
		return f.sh, nil
	}
	f.rc.cfg.DiskFailed = func(*shuffle.State, error) { t.Error("DiskFailed called without a disk failure") }
	ctx := context.Background()
	other := oldChunk(t, 0, 0)
	other.Shuffle = "t"
	for _, tc := range []struct {
		name    string
		payload []byte
		code    wire.RefusalCode
	}{
		{"malformed", []byte{1, 2, 3}, wire.RefuseBadRequest},
		{"unknown shuffle", shard.AppendMsg(nil, other), wire.RefuseUnknownShuffle},
	} {
		var r *shuffle.Refusal
		if err := f.rc.HandlePayload(ctx, tc.payload); !errors.As(err, &r) || r.Code != tc.code {
			t.Fatalf("%s: HandlePayload = %v, want a refusal with code %v", tc.name, err, tc.code)
		}
	}
	for task := range uint64(2) {
		b := shard.AppendMsg(nil, oldChunk(t, 0, task))
		if err := f.rc.HandlePayload(ctx, b); err != nil {
			t.Fatalf("task %d: %v", task, err)
		}
		clear(b) // as a recycled payload would be
	}
	f.sh.Finish(shuffle.Sealed, nil)
	c, err := f.rc.GetChunk(ctx, f.sh, 0)
	if err != nil || !slices.Equal(c.Data, []byte{0, 1, 10, 11}) {
		t.Fatalf("GetChunk = %v, %v; want [0 1 10 11]", c.Data, err)
	}
}
