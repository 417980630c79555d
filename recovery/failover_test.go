package recovery

import (
	"slices"
	"testing"
)

// step is one expected decision of a round, and the answers fed after it.
type step struct {
	want    Action
	nodes   []string
	answers map[string]bool
	moved   bool // the epoch moves before the next step
}

// TestFailover walks rounds of the core through its decisions.
func TestFailover(t *testing.T) {
	live := []string{"a", "b", "c", "d"}
	cands := []string{"a", "d", "b", "c"}
	for _, tc := range []struct {
		name  string
		self  string
		coord bool
		down  []string
		steps []step
	}{
		{"nothing down", "b", false, nil, nil},
		{"member sees another member down", "b", false, []string{"c"}, nil},
		{"not the successor", "b", false, []string{"a"}, nil},
		{"successor takes over", "d", false, []string{"a"}, []step{
			{want: Ping, nodes: []string{"b", "c"}, answers: map[string]bool{"b": true, "c": true}},
			{want: Verdict}, {want: TakeOver},
		}},
		{"successor without majority in sight", "d", false, []string{"a", "b"}, []step{{want: Verdict}}},
		{"successor whose pings go unanswered", "d", false, []string{"a"}, []step{
			{want: Ping, nodes: []string{"b", "c"}, answers: map[string]bool{"b": false, "c": false}},
			{want: Verdict},
		}},
		{"epoch moved during the pings", "d", false, []string{"a"}, []step{
			{want: Ping, nodes: []string{"b", "c"}, answers: map[string]bool{"b": true, "c": true}, moved: true},
			{want: Verdict}, {want: Later},
		}},
		{"coordinator loses a member", "a", true, []string{"c"}, []step{
			{want: Ping, nodes: []string{"b", "d"}, answers: map[string]bool{"b": true}},
			{want: Verdict}, {want: Lose, nodes: []string{"c"}},
		}},
		{"coordinator cut off alone", "a", true, []string{"b"}, []step{
			{want: Ping, nodes: []string{"c", "d"}, answers: map[string]bool{"c": false, "d": false}},
			{want: Verdict},
		}},
		{"coordinator with too few in sight", "a", true, []string{"b", "c", "d"}, []step{{want: Verdict}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &View{Self: tc.self, Candidates: cands, Members: 4, Coordinating: tc.coord, Down: map[string]bool{},
				Epoch: Epoch{Coordinator: "a", Live: live}}
			for _, n := range tc.down {
				v.Down[n] = true
			}
			f := NewFailover()
			for i, s := range tc.steps {
				d := f.Step(v)
				if d.Action != s.want || (s.nodes != nil && !slices.Equal(d.Nodes, s.nodes)) {
					t.Fatalf("step %d: %s %v, want %s %v", i, d.Action, d.Nodes, s.want, s.nodes)
				}
				for _, n := range d.Nodes {
					if d.Action == Ping && f.Answered(n, s.answers[n]) {
						break
					}
				}
				if s.moved {
					v.Epoch = Epoch{Number: 1, Coordinator: "a", Live: []string{"a", "c", "d"}, Lost: []string{"b"}}
				}
			}
			if d := f.Step(v); d.Action != Done {
				t.Fatalf("after the steps: %s, want done", d.Action)
			}
		})
	}
}

// TestFence: the higher term fences the lower.
func TestFence(t *testing.T) {
	mine := Epoch{Number: 1, Term: 1}
	for _, tc := range []struct {
		a    Answer
		want FenceAction
	}{
		{Answer{Status: StatusMember, Term: 0}, Tell},
		{Answer{Status: StatusLost, Term: 0}, Tell},
		{Answer{Status: StatusLost, Term: 2}, StepDown},
		{Answer{Status: StatusMember, Term: 2}, Ignore},
		{Answer{Status: StatusMember, Term: 1}, Ignore},
		{Answer{Status: StatusUnknown}, Ignore},
		{Answer{Status: StatusClosed}, Ignore},
		{Answer{}, Ignore},
	} {
		if got := Fence(mine, tc.a); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.a, got, tc.want)
		}
	}
}
