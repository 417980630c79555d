package failover

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

// host is a Host that holds no shuffle and reaches nobody: the driver's
// rounds find nothing to do, so its answers can be checked one at a time.
type host struct{ noted []string }

func (h *host) Name() string                       { return "a" }
func (h *host) Lookup(id string) (*Shuffle, error) { return nil, errors.New("unknown") }
func (h *host) Held() []*Shuffle                   { return nil }
func (h *host) Request(context.Context, string, control.Msg) (control.Reply, error) {
	return control.Reply{}, errors.New("unreachable")
}
func (h *host) Broadcast(context.Context, []string, control.Msg) error { return nil }
func (h *host) Background(func(context.Context))                       {}
func (h *host) Publish(*Shuffle)                                       {}
func (h *host) Drop(string, string, bool) error                        { return nil }
func (h *host) CoordOf(*Shuffle) (*coordinator.Shuffle, error)         { return nil, errors.New("no") }
func (h *host) ForgetBefore(string, uint64)                            {}
func (h *host) Forget(string)                                          {}
func (h *host) NoteMember(m member.Member)                             { h.noted = append(h.noted, m.Name) }

// newShuffle is shuffle "s" over a, b, c, d created by creator, on node a.
func newShuffle(t *testing.T, creator string) *Shuffle {
	t.Helper()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := &spec.Spec{ID: "s", Kind: spec.Dataframe, Tasks: 2, Partitions: 4, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}}
	st, err := shuffle.New(sp, creator, []string{"a", "b", "c", "d"}, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	return NewShuffle(st, time.Now())
}

// TestNoQuorum: a node that sees the coordinator down reports no quorum
// only when a strict majority of the members is not up as it sees them.
func TestNoQuorum(t *testing.T) {
	h := &host{}
	d := New(Config{Host: h})
	sh := newShuffle(t, "b")
	co := sh.Coordinator()
	if co == "a" {
		t.Skip("node a coordinates the shuffle")
	}
	if _, _, short := d.NoQuorum(sh); short {
		t.Fatal("short of quorum with every member up")
	}
	d.memberEvent(context.Background(), member.Event{Kind: member.Failed, Member: member.Member{Name: co, APIAddr: "x"}})
	if _, q, short := d.NoQuorum(sh); short {
		t.Fatalf("short of quorum with 3 of 4 up: %+v", q)
	}
	for _, n := range []string{"b", "c", "d"} {
		if n != co {
			d.memberEvent(context.Background(), member.Event{Kind: member.Failed, Member: member.Member{Name: n}})
			break
		}
	}
	gotCo, q, short := d.NoQuorum(sh)
	if !short || gotCo != co || q.Up != 2 {
		t.Fatalf("NoQuorum with 2 of 4 up = %s, %+v, %v; want %s, 2 up, short", gotCo, q, short, co)
	}
	d.memberEvent(context.Background(), member.Event{Kind: member.Joined, Member: member.Member{Name: co}})
	if _, _, short := d.NoQuorum(sh); short {
		t.Fatal("short of quorum once the coordinator is back")
	}
	if len(h.noted) != 3 {
		t.Fatalf("host told of %d membership events, want 3", len(h.noted))
	}
}

// TestAnswerCheck: a node asked about a shuffle it does not hold answers
// closed when its client closed it there, unknown otherwise; one that
// should coordinate it but has no coordinator part yet answers busy.
func TestAnswerCheck(t *testing.T) {
	d := New(Config{Host: &host{}})
	c := &control.Msg{Op: control.OpCheck, Shuffle: "s", Node: "b"}
	r, err := d.AnswerCheck(c, nil, "closed", true)
	if err != nil || r.Status != control.StatusClosed {
		t.Fatalf("closed here: %+v, %v; want closed", r, err)
	}
	r, err = d.AnswerCheck(c, nil, "expired", false)
	if err != nil || r.Status != control.StatusUnknown || r.Reason != "expired" {
		t.Fatalf("expired here: %+v, %v; want unknown, expired", r, err)
	}
	sh := newShuffle(t, "a")
	if sh.Coordinator() != "a" {
		t.Skip("node a does not coordinate the shuffle it created")
	}
	var busy *shuffle.Busy
	if _, err = d.AnswerCheck(c, sh, "", false); !errors.As(err, &busy) {
		t.Fatalf("held as its coordinator without the coordinator part: %v; want busy (taking over)", err)
	}
}

// TestAnswered: a reply of any kind, a refusal or busy too, is an answer;
// a transport error is not.
func TestAnswered(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, true},
		{&wire.Refusal{Code: wire.RefuseUnknownShuffle}, true},
		{&wire.BusyError{RetryAfter: time.Millisecond}, true},
		{errors.New("link cut"), false},
	} {
		if got := Answered(tc.err); got != tc.want {
			t.Errorf("Answered(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
