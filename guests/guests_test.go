package guests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

var errUnavailable = errors.New("test: unavailable")

// guestState is shuffle "s" over a, b, c as guest d holds it, in epoch 0.
func guestState(t *testing.T) *shuffle.State {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 6, DType: "|u1",
		OldChunks: spec.Chunks{{3, 3}}, NewChunks: spec.Chunks{{1, 1, 1, 1, 1, 1}}}
	st, err := shuffle.New(sp, "a", []string{"a", "b", "c"}, nil, "d")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestMayJoin(t *testing.T) {
	r := &record.Record{Members: []string{"a", "b", "c"}, Lost: []string{"x"}}
	for node, want := range map[string]bool{"a": false, "x": false, "d": true} {
		if got := MayJoin(node, r); got != want {
			t.Errorf("MayJoin(%s) = %v, want %v", node, got, want)
		}
	}
	if Is("a", r.Members) || !Is("d", r.Members) {
		t.Error("Is: a member counted as a guest or a guest as a member")
	}
}

func TestAfterPut(t *testing.T) {
	for _, tc := range []struct {
		name      string
		node      string
		putErr    error
		recEpoch  uint64
		wantEpoch uint64
		wantFetch bool
	}{
		{"stale: moves", "d", fmt.Errorf("put: %w", shuffle.ErrStaleEpoch), 1, 1, true},
		{"unavailable: moves", "d", fmt.Errorf("put: %w", errUnavailable), 1, 1, true},
		{"record not newer", "d", shuffle.ErrStaleEpoch, 0, 0, true},
		{"other error", "d", errors.New("disk"), 1, 0, false},
		{"put succeeded", "d", nil, 1, 0, false},
		{"a member's shuffle", "a", shuffle.ErrStaleEpoch, 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := guestState(t)
			fetched, forgot := false, uint64(0)
			g := New(Config{Node: tc.node, Log: slog.New(slog.DiscardHandler), Unavailable: errUnavailable,
				Fetch: func(_ context.Context, id string) (*record.Record, error) {
					fetched = true
					r := record.Of(st)
					r.Epoch, r.Lost = tc.recEpoch, []string{"c"}[:tc.recEpoch]
					return &r, nil
				},
				Forget: func(id string, epoch uint64) { forgot = epoch }})
			g.AfterPut(context.Background(), st, tc.putErr)
			if fetched != tc.wantFetch {
				t.Errorf("record read: %v, want %v", fetched, tc.wantFetch)
			}
			if got := st.Route().Epoch; got != tc.wantEpoch || forgot != tc.wantEpoch {
				t.Errorf("epoch %d (splitter told %d), want %d", got, forgot, tc.wantEpoch)
			}
		})
	}
}
