package coordinator

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// TestAbortFrom: a member's abort fails the shuffle with its reason and
// tells every member; an abort from a node outside the shuffle is refused
// as a bad request and changes nothing.
func TestAbortFrom(t *testing.T) {
	cd, sh, n := newFixture(t)
	err := cd.AbortFrom(sh, &control.Msg{Op: control.OpAbort, Node: "x", Reason: "disk full"})
	var r *shuffle.Refusal
	if !errors.As(err, &r) || r.Code != wire.RefuseBadRequest {
		t.Fatalf("abort from a non-member: %v, want a bad-request refusal", err)
	}
	if st, err := cd.Status(sh); err != nil || st.Status != control.StatusRunning {
		t.Fatalf("status after a refused abort: %+v, %v; want running", st, err)
	}
	if err := cd.AbortFrom(sh, &control.Msg{Op: control.OpAbort, Node: "b", Reason: "disk full"}); err != nil {
		t.Fatal(err)
	}
	if ops := n.ops(); !slices.Equal(ops, []string{"fail", "fail", "fail"}) {
		t.Fatalf("broadcast %v, want a fail to every member", ops)
	}
	if _, err := cd.Status(sh); !errors.Is(err, shuffle.ErrFailed) || !strings.Contains(err.Error(), "node b cannot go on: disk full") {
		t.Fatalf("status after the abort: %v; want ErrFailed naming node b and its reason", err)
	}
}
