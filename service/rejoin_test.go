package service

import (
	"testing"

	"github.com/shufflenode/shufflenode/control"
)

// TestDecide: a node frees a shuffle on a close anywhere, or once every
// candidate answered and none counts it in; never while one counts it in
// or one did not answer.
func TestDecide(t *testing.T) {
	r := func(status string) control.Reply { return control.Reply{Status: status} }
	for _, tc := range []struct {
		name    string
		answers map[string]control.Reply
		drop    bool
	}{
		{"member", map[string]control.Reply{"a": r(control.StatusMember)}, false},
		{"closed beside no answer", map[string]control.Reply{"a": {}, "b": r(control.StatusClosed)}, true},
		{"lost, the others follow", map[string]control.Reply{"a": r(control.StatusLost), "b": r(control.StatusUnknown)}, true},
		{"lost, a successor counts it in", map[string]control.Reply{"a": r(control.StatusLost), "b": r(control.StatusMember)}, false},
		{"lost, a candidate did not answer", map[string]control.Reply{"a": r(control.StatusLost), "b": {}}, false},
		{"nobody coordinates", map[string]control.Reply{"a": r(control.StatusUnknown), "b": r(control.StatusUnknown)}, true},
		{"the coordinator is down", map[string]control.Reply{"a": {}, "b": r(control.StatusUnknown)}, false},
	} {
		got := decide(tc.answers)
		if got.drop != tc.drop {
			t.Errorf("%s: drop %v (%s), want %v", tc.name, got.drop, got.why, tc.drop)
		}
	}
}
