package control

import (
	"errors"
	"testing"
)

func TestCheckAuthor(t *testing.T) {
	for _, tc := range []struct {
		name string
		from string
		c    Msg
		ok   bool
	}{
		{"create from its coordinator", "a", Msg{Op: OpCreate, Coordinator: "a", Members: []string{"a", "b"}}, true},
		{"create for another coordinator", "b", Msg{Op: OpCreate, Coordinator: "a", Members: []string{"a", "b"}}, false},
		{"create from a non-member", "c", Msg{Op: OpCreate, Coordinator: "c", Members: []string{"a", "b"}}, false},
		{"epoch from its node", "a", Msg{Op: OpEpoch, Node: "a"}, true},
		{"seal in another's name", "b", Msg{Op: OpSeal, Node: "a"}, false},
		{"takeover in another's name", "b", Msg{Op: OpTakeover, Node: "a"}, false},
		{"handover in another's name", "b", Msg{Op: OpHandOver, Node: "a"}, false},
		{"handed over from its node", "a", Msg{Op: OpHandedOver, Node: "a"}, true},
		{"abort in another's name", "b", Msg{Op: OpAbort, Node: "a"}, false},
		{"a report names no author", "b", Msg{Op: OpDone, Node: "a"}, true},
		{"peer not known yet", "", Msg{Op: OpSeal, Node: "a"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuthor(tc.from, &tc.c)
			if tc.ok != (err == nil) || !tc.ok && !errors.Is(err, ErrAuthor) {
				t.Errorf("CheckAuthor: %v, want ok %v (or ErrAuthor)", err, tc.ok)
			}
		})
	}
}
