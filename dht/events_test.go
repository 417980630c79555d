package dht

import "testing"

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{MemberJoin: "join", MemberLeave: "leave", MemberFail: "fail", 9: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
