package create

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

var (
	errClosed      = errors.New("test: closed")
	errExists      = errors.New("test: exists")
	errUnavailable = errors.New("test: unavailable")
)

func arraySpec(id string, partitions, replication int) *spec.Spec {
	return &spec.Spec{ID: id, Kind: spec.Array, Tasks: 2, Partitions: partitions, DType: "|u1", Replication: replication,
		OldChunks: spec.Chunks{{3, 3}}, NewChunks: spec.Chunks{slices.Repeat([]int64{1}, partitions)}}
}

// node is one node's view: its members and the shuffles it holds.
type node struct {
	members []string
	held    map[string]*shuffle.State
	closed  bool
}

func (n *node) planner() *Planner {
	return New(Config{
		Node: func() string { return "a" },
		Caps: func() limits.Caps {
			return limits.Caps{Node: "a", MaxShuffles: 2, MaxTasks: 10, MaxPartitions: 10, MaxRuns: 100}
		},
		Members: func() []string { return slices.Clone(n.members) },
		Held:    func() int { return len(n.held) },
		Lookup: func(id string) (*shuffle.State, error) {
			if n.closed {
				return nil, errClosed
			}
			if st, ok := n.held[id]; ok {
				return st, nil
			}
			return nil, fmt.Errorf("test: unknown shuffle %s", id)
		},
		Closed: errClosed, Exists: errExists, Unavailable: errUnavailable,
	})
}

// other is shuffle "o" created over members a, b, c and moved past the
// loss of c.
func other(t *testing.T) *shuffle.State {
	t.Helper()
	st, err := shuffle.New(arraySpec("o", 6, 1), "a", []string{"a", "b", "c"}, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := st.RouteFor([]string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	st.Lock()
	st.SetRouteLocked(rt)
	st.Unlock()
	return st
}

func TestPlanPinsLiveMembers(t *testing.T) {
	n := &node{members: []string{"a", "b", "d"}}
	sp, pin, err := n.planner().Plan(arraySpec("s", 6, 1))
	if err != nil {
		t.Fatal(err)
	}
	if sp.ID != "s" || !slices.Equal(pin.Members, n.members) || !slices.Equal(pin.Live, n.members) || len(pin.Lost) != 0 {
		t.Errorf("pinned %+v, want the live members %v", pin, n.members)
	}
}

func TestPlanPinsLikeCoPartition(t *testing.T) {
	o := other(t)
	n := &node{members: []string{"a", "b", "d"}, held: map[string]*shuffle.State{"o": o}}
	sp := arraySpec("s", 6, 1)
	sp.CoPartition = "o"
	got, pin, err := n.planner().Plan(sp)
	if err != nil {
		t.Fatal(err)
	}
	if got == sp || got.OwnershipSeed != o.Spec.Seed() || sp.OwnershipSeed != "" {
		t.Errorf("spec to create has seed %q (a copy: %v), want a copy with the other's seed %q", got.OwnershipSeed, got != sp, o.Spec.Seed())
	}
	if !slices.Equal(pin.Members, []string{"a", "b", "c"}) || !slices.Equal(pin.Lost, []string{"c"}) || !slices.Equal(pin.Live, []string{"a", "b"}) {
		t.Errorf("pinned %+v, want the other's members, lost and live", pin)
	}
}

func TestPlanRefuses(t *testing.T) {
	o := other(t)
	co := func(mod func(*spec.Spec)) *spec.Spec {
		sp := arraySpec("s", 6, 1)
		sp.CoPartition = "o"
		if mod != nil {
			mod(sp)
		}
		return sp
	}
	for _, tc := range []struct {
		name    string
		n       node
		sp      *spec.Spec
		want    error
		wantMsg string
	}{
		{"over the caps", node{}, arraySpec("s", 11, 1), limits.ErrLimit, ""},
		{"does not plan", node{}, &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: 3}, shuffle.ErrBadInput, ""},
		{"held already", node{held: map[string]*shuffle.State{"s": o}}, arraySpec("s", 6, 1), errExists, ""},
		{"too many held", node{held: map[string]*shuffle.State{"o": o, "p": o}}, arraySpec("s", 6, 1), limits.ErrLimit, ""},
		{"co-partition not held", node{held: map[string]*shuffle.State{}}, co(nil), shuffle.ErrBadInput, "no such shuffle"},
		{"co-partition on a closed node", node{closed: true}, co(nil), errClosed, ""},
		{"other partitions", node{}, co(func(sp *spec.Spec) { *sp = *arraySpec("s", 3, 1); sp.CoPartition = "o" }), shuffle.ErrBadInput, "3 partitions"},
		{"other replication", node{}, co(func(sp *spec.Spec) { sp.Replication = 2 }), shuffle.ErrBadInput, "replication 2"},
		{"other seed", node{}, co(func(sp *spec.Spec) { sp.OwnershipSeed = "x" }), shuffle.ErrBadInput, "ownership_seed"},
		{"member left", node{members: []string{"a"}}, co(nil), errUnavailable, "node b left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.n
			if n.held == nil && !n.closed {
				n.held = map[string]*shuffle.State{"o": o}
			}
			if n.members == nil {
				n.members = []string{"a", "b"}
			}
			_, _, err := n.planner().Plan(tc.sp)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Plan: %v, want %v", err, tc.want)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("Plan: %v, want it to say %q", err, tc.wantMsg)
			}
		})
	}
}

func TestCheckInstall(t *testing.T) {
	p := (&node{}).planner()
	sp := arraySpec("s", 6, 1)
	for _, tc := range []struct {
		name string
		c    control.Msg
		want error
	}{
		{"ok", control.Msg{Op: control.OpCreate, Shuffle: "s", Spec: sp}, nil},
		{"no spec", control.Msg{Op: control.OpCreate, Shuffle: "s"}, shuffle.ErrBadInput},
		{"other spec", control.Msg{Op: control.OpCreate, Shuffle: "t", Spec: sp}, shuffle.ErrBadInput},
		{"over the caps", control.Msg{Op: control.OpCreate, Shuffle: "s", Spec: arraySpec("s", 11, 1)}, limits.ErrLimit},
		{"this node lost", control.Msg{Op: control.OpCreate, Shuffle: "s", Spec: sp, Lost: []string{"a"}}, shuffle.ErrBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.CheckInstall(&tc.c); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("CheckInstall: %v, want %v", err, tc.want)
			}
		})
	}
}
