package recovery

import (
	"slices"
	"testing"
)

// TestCount: the two rules at the edges.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		c              Count
		majority, half bool
	}{
		{Count{Up: 2, Live: 4, Members: 4}, false, true},
		{Count{Up: 3, Live: 4, Members: 4}, true, true},
		{Count{Up: 1, Live: 2, Members: 4}, false, false},
		{Count{Up: 2, Live: 3, Members: 4}, true, true},
		{Count{Up: 3, Live: 5, Members: 5}, true, true},
		{Count{Up: 2, Live: 5, Members: 5}, false, false},
	} {
		if tc.c.Majority() != tc.majority || tc.c.Half() != tc.half {
			t.Errorf("%+v: majority %v half %v, want %v %v", tc.c, tc.c.Majority(), tc.c.Half(), tc.majority, tc.half)
		}
	}
}

// TestSplitBrain checks the argument of quorum.go by brute force over
// every split of up to 9 members into the coordinator's side A and the
// other side B, and every epoch B may know: a live list of l members, B
// and l-|B| of A (the coordinator's epochs only drop members, so the A
// members still in its epoch, the only ones it counts up, are within B's
// list). The coordinator may declare all of B lost, or B may take over,
// never both.
func TestSplitBrain(t *testing.T) {
	for m := 1; m <= 9; m++ {
		for b := 1; b < m; b++ { // member 0 coordinates, on side A
			a := m - b
			for l := b; l <= m && l-b <= a; l++ {
				coordLoses := Count{Up: l - b, Members: m}.Half()
				takes := Count{Up: b, Live: l}.Majority()
				if coordLoses && takes {
					t.Errorf("%d members, %d on the coordinator's side, %d in B's epoch of %d: both sides act", m, a, b, l)
				}
			}
		}
	}
}

// TestPoll: answers count once, a node not asked changes nothing, and the
// result is pending until met or every answer is in.
func TestPoll(t *testing.T) {
	v := &View{Self: "a", Members: 4, Epoch: Epoch{Live: []string{"a", "b", "c", "d"}}, Down: map[string]bool{"d": true}}
	p := NewPoll(Majority, v)
	if !slices.Equal(p.Ask(), []string{"b", "c"}) {
		t.Fatalf("asks %v, want [b c]", p.Ask())
	}
	steps := []struct {
		node string
		ok   bool
		want VoteResult
	}{
		{"x", true, VotePending},
		{"b", true, VotePending},
		{"b", true, VotePending},
		{"c", false, VoteLost},
	}
	for _, s := range steps {
		if got := p.Answer(s.node, s.ok); got != s.want {
			t.Fatalf("after %s %v: %s, want %s", s.node, s.ok, got, s.want)
		}
	}
	if c := p.Count(); c.Up != 2 {
		t.Fatalf("up %d, want 2", c.Up)
	}
	h := NewPoll(Half, v)
	if got := h.Result(); got != VotePending {
		t.Fatalf("half before answers: %s", got)
	}
	if got := h.Answer("c", true); got != VoteWon {
		t.Fatalf("half after one answer: %s, want won", got)
	}
}

// TestSuccessor: the lost list of the takeover epoch lists the live
// members seen down in candidate order, after the old lost list.
func TestSuccessor(t *testing.T) {
	cands := []string{"a", "d", "b", "c"}
	down := func(n string) bool { return n == "a" || n == "b" || n == "x" }
	node, lost, ok := Successor(cands, []string{"a", "b", "c", "d"}, nil, down)
	if !ok || node != "d" || !slices.Equal(lost, []string{"a", "b"}) {
		t.Fatalf("successor %s lost %v %v, want d [a b]", node, lost, ok)
	}
	node, lost, _ = Successor(cands, []string{"b", "c", "d"}, []string{"a"}, func(n string) bool { return n == "d" })
	if node != "b" || !slices.Equal(lost, []string{"a", "d"}) {
		t.Fatalf("successor %s lost %v, want b [a d]", node, lost)
	}
	if _, _, ok := Successor(cands, cands, nil, func(string) bool { return true }); ok {
		t.Fatal("a successor with every candidate down")
	}
}
