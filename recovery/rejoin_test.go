package recovery

import (
	"slices"
	"testing"
)

// TestDecide: a node frees a shuffle on a close anywhere, or once every
// candidate answered and none counts it in; never while one counts it in,
// one is taking over, or one did not answer.
func TestDecide(t *testing.T) {
	r := func(s Status) Answer { return Answer{Status: s} }
	for _, tc := range []struct {
		name    string
		answers map[string]Answer
		drop    bool
		why     string
	}{
		{"member", map[string]Answer{"a": r(StatusMember)}, false, "no candidate coordinates it"},
		{"closed beside no answer", map[string]Answer{"a": {}, "b": r(StatusClosed)}, true, "closed (node b freed it on its client's close)"},
		{"lost, the others follow", map[string]Answer{"a": {Status: StatusLost, Epoch: 2}, "b": r(StatusUnknown)}, true, "declared lost in epoch 2 by its coordinator a"},
		{"lost, a successor counts it in", map[string]Answer{"a": r(StatusLost), "b": r(StatusMember)}, false, "declared lost in epoch 0 by its coordinator a"},
		{"lost, a candidate did not answer", map[string]Answer{"a": r(StatusLost), "b": {}}, false, "declared lost in epoch 0 by its coordinator a"},
		{"lost, a candidate is taking over", map[string]Answer{"a": r(StatusLost), "b": r(StatusBusy)}, false, "declared lost in epoch 0 by its coordinator a"},
		{"nobody coordinates", map[string]Answer{"a": r(StatusUnknown), "b": r(StatusUnknown)}, true, "no candidate coordinates it"},
		{"the coordinator is down", map[string]Answer{"a": {}, "b": r(StatusUnknown)}, false, "no candidate coordinates it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(&View{Self: "x", Epoch: Epoch{Term: 0}}, tc.answers)
			if got.Drop != tc.drop || got.Why != tc.why {
				t.Errorf("drop %v (%s), want %v (%s)", got.Drop, got.Why, tc.drop, tc.why)
			}
		})
	}
}

// TestDecideOtherLine: after a split each side may have moved the shuffle
// on with a coordinator of its own; a member of the older term's line that
// a coordinator of a newer term, lost in its own epoch, counts in keeps the
// shuffle and asks that coordinator to declare it lost (it cannot join its
// epochs), and drops it once declared lost. A candidate it knows lost that
// does not answer keeps nothing; one of its own line that does not answer,
// or one taking over, keeps it.
func TestDecideOtherLine(t *testing.T) {
	v := &View{Self: "b", Epoch: Epoch{Number: 2, Term: 0, Coordinator: "a", Live: []string{"a", "b"}, Lost: []string{"c", "d"}}}
	for _, tc := range []struct {
		name    string
		answers map[string]Answer
		drop    bool
		tell    []string
	}{
		{"the newer line counts it in", map[string]Answer{"a": {Status: StatusUnknown}, "c": {Status: StatusMember, Epoch: 1, Term: 1}, "d": {Status: StatusUnknown}}, false, []string{"c"}},
		{"and its own coordinator does not answer", map[string]Answer{"a": {}, "c": {Status: StatusMember, Epoch: 1, Term: 1}, "d": {}}, false, []string{"c"}},
		{"declared lost by the newer line", map[string]Answer{"a": {Status: StatusUnknown}, "c": {Status: StatusLost, Epoch: 2, Term: 1}, "d": {Status: StatusUnknown}}, true, nil},
		{"lost candidates silent", map[string]Answer{"a": {Status: StatusUnknown}, "c": {}, "d": {}}, true, nil},
		{"its own coordinator silent", map[string]Answer{"a": {}, "c": {}, "d": {}}, false, nil},
		{"a lost candidate taking over", map[string]Answer{"a": {Status: StatusUnknown}, "c": {Status: StatusBusy}, "d": {}}, false, nil},
		{"the newer line has not lost what this node has", map[string]Answer{"a": {Status: StatusUnknown}, "c": {}, "d": {}, "e": {Status: StatusMember, Epoch: 1, Term: 4, Lost: []string{"a"}}}, false, []string{"e"}},
		{"closed beats the newer line", map[string]Answer{"a": {Status: StatusClosed}, "c": {Status: StatusMember, Term: 1}}, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(v, tc.answers)
			if got.Drop != tc.drop || !slices.Equal(got.Tell, tc.tell) {
				t.Errorf("drop %v tell %v (%s), want %v %v", got.Drop, got.Tell, got.Why, tc.drop, tc.tell)
			}
		})
	}
	// A newer term of this node's own line (a successor it has not heard
	// from yet) keeps the shuffle, as before: its epoch move will come.
	own := &View{Self: "b", Epoch: Epoch{Term: 0, Coordinator: "a", Live: []string{"a", "b", "c"}}}
	if r := Decide(own, map[string]Answer{"a": {}, "c": {Status: StatusMember, Epoch: 1, Term: 1}}); r.Drop || len(r.Tell) > 0 {
		t.Errorf("a successor of its own line: %+v, want keep", r)
	}
}

// TestJoinable: an epoch move of a newer term is taken only from the same
// line of epochs (it has lost every node this one has).
func TestJoinable(t *testing.T) {
	mine := Epoch{Number: 2, Term: 0, Lost: []string{"c", "d"}}
	for _, tc := range []struct {
		term uint64
		lost []string
		want bool
	}{
		{0, []string{"c", "d", "b"}, true},
		{1, []string{"c", "d", "a"}, true},
		{1, []string{"a"}, false},
		{2, []string{"a", "c"}, false},
		{0, nil, true}, // an older epoch of this term: not this rule's business
	} {
		if got := Joinable(mine, tc.term, tc.lost); got != tc.want {
			t.Errorf("term %d lost %v: %v, want %v", tc.term, tc.lost, got, tc.want)
		}
	}
}

// TestFirst: the coordinator this node knows decides alone when it counts
// the node in or closed the shuffle.
func TestFirst(t *testing.T) {
	for _, tc := range []struct {
		status        Status
		decided, drop bool
	}{
		{StatusMember, true, false},
		{StatusClosed, true, true},
		{StatusLost, false, false},
		{StatusUnknown, false, false},
		{NoAnswer, false, false},
	} {
		r, ok := First("a", Answer{Status: tc.status})
		if ok != tc.decided || r.Drop != tc.drop {
			t.Errorf("%s: decided %v drop %v, want %v %v", tc.status, ok, r.Drop, tc.decided, tc.drop)
		}
	}
}

// TestAnswerCheck: what a node answers a check, by what it holds.
func TestAnswerCheck(t *testing.T) {
	epoch := Epoch{Number: 1, Term: 0, Coordinator: "a", Live: []string{"a", "b", "c"}, Lost: []string{"d"}}
	view := func(self string, coordinating bool) View {
		return View{Self: self, Epoch: epoch, Coordinating: coordinating}
	}
	for _, tc := range []struct {
		name string
		q    CheckQuery
		want Status
	}{
		{"never had it", CheckQuery{Asker: "b"}, StatusUnknown},
		{"closed it", CheckQuery{Asker: "b", ClosedHere: true}, StatusClosed},
		{"coordinates, asker live", CheckQuery{Asker: "b", Held: true, View: view("a", true)}, StatusMember},
		{"coordinates, asker lost", CheckQuery{Asker: "d", Held: true, View: view("a", true)}, StatusLost},
		{"taking over", CheckQuery{Asker: "b", Held: true, View: view("a", false)}, StatusBusy},
		{"follows another", CheckQuery{Asker: "b", Held: true, View: view("c", false)}, StatusUnknown},
	} {
		if got := AnswerCheck(&tc.q); got.Status != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got.Status, tc.want)
		}
	}
}

// TestLoseAfterTakeover: the members that answered a takeover holding no
// state of the shuffle are declared lost, in name order; silent ones and
// those that sent facts are not.
func TestLoseAfterTakeover(t *testing.T) {
	got := LoseAfterTakeover(map[string]TakeoverAnswer{"d": TakeoverUnheld, "c": TakeoverFacts, "e": TakeoverSilent, "a": TakeoverUnheld})
	if !slices.Equal(got, []string{"a", "d"}) {
		t.Errorf("lost after the takeover: %v, want [a d]", got)
	}
}
