package seal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/wire"
)

var (
	errUnavailable = errors.New("test: unavailable")
	errNoQuorum    = errors.New("test: no quorum")
)

func newState(t *testing.T) *shuffle.State {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 6, DType: "|u1",
		OldChunks: spec.Chunks{{3, 3}}, NewChunks: spec.Chunks{{1, 1, 1, 1, 1, 1}}}
	st, err := shuffle.New(sp, "a", []string{"a", "b", "c"}, nil, "b")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// script answers polls in turn, the last one for ever.
type script []error

func (s *script) poll(context.Context) (control.Reply, error) {
	err := (*s)[0]
	if len(*s) > 1 {
		*s = (*s)[1:]
	}
	if err == nil {
		return control.Reply{Status: control.StatusSealed, Epoch: 1}, nil
	}
	return control.Reply{}, err
}

func TestWait(t *testing.T) {
	unreachable := fmt.Errorf("node a: %w", errUnavailable)
	for _, tc := range []struct {
		name       string
		answers    script
		lossWait   time.Duration
		noQuorum   bool
		fail       bool
		want       error
		wantSealed bool
	}{
		{"sealed", script{nil}, time.Minute, false, false, nil, true},
		{"busy, then sealed", script{wire.ErrBusy, wire.ErrBusy, nil}, 0, false, false, nil, true},
		{"coordinator replaced within the wait", script{unreachable, unreachable, nil}, time.Minute, false, false, nil, true},
		{"coordinator gone past the wait", script{unreachable}, time.Minute, false, false, errUnavailable, false},
		{"no quorum", script{unreachable}, time.Minute, true, false, errNoQuorum, false},
		{"failed here", script{unreachable}, time.Minute, false, true, errUnavailable, false},
		{"refused", script{shuffle.ErrFailed}, time.Minute, false, false, shuffle.ErrFailed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newState(t)
				if tc.fail {
					st.Finish(shuffle.Failed, errors.New("test"))
				}
				w := New(Config{Unavailable: errUnavailable, LossWait: tc.lossWait})
				answers := slices.Clone(tc.answers)
				ask := Ask{Poll: answers.poll, NoQuorum: func() error {
					if tc.noQuorum {
						return errNoQuorum
					}
					return nil
				}}
				start := time.Now()
				r, err := w.Wait(context.Background(), st, ask)
				if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
					t.Fatalf("Wait: %v, want %v", err, tc.want)
				}
				if r.Sealed != tc.wantSealed {
					t.Errorf("sealed %v, want %v", r.Sealed, tc.wantSealed)
				}
				if tc.name == "coordinator gone past the wait" && time.Since(start) < tc.lossWait {
					t.Errorf("gave up after %s, before the loss wait of %s", time.Since(start), tc.lossWait)
				}
			})
		})
	}
}

func TestWaitCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		pending := func(context.Context) (control.Reply, error) { return control.Reply{Status: control.StatusOK}, nil }
		_, err := New(Config{Unavailable: errUnavailable}).Wait(ctx, newState(t), Ask{Poll: pending, NoQuorum: func() error { return nil }})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait: %v, want the context's deadline", err)
		}
	})
}
