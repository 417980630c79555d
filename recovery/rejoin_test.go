package recovery

import "testing"

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
			got := Decide(tc.answers)
			if got.Drop != tc.drop || got.Why != tc.why {
				t.Errorf("drop %v (%s), want %v (%s)", got.Drop, got.Why, tc.drop, tc.why)
			}
		})
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
