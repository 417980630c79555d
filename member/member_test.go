package member

import (
	"slices"
	"testing"
)

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{Joined: "join", Left: "leave", Failed: "fail", 9: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("EventKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestCloneSharesNoSlice(t *testing.T) {
	m := Member{Name: "a", Addrs: []string{"x", "y"}}
	c := m.Clone()
	c.Addrs[0] = "changed"
	if !slices.Equal(m.Addrs, []string{"x", "y"}) {
		t.Fatalf("Clone shares Addrs: original now %v", m.Addrs)
	}
}
