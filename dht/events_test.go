package dht

import (
	"fmt"
	"testing"
	"time"
)

// TestSubscriberKeepsOrderWithoutReader checks that a subscriber queues
// every event while nobody reads (push never blocks), delivers them in
// order, and closes its channel on stop.
func TestSubscriberKeepsOrderWithoutReader(t *testing.T) {
	s := &subscriber{out: make(chan Event, 1), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.pump()
	const n = 1000
	for i := range n {
		s.push(Event{Kind: MemberJoin, Member: Member{Name: fmt.Sprint(i)}})
	}
	for i := range n {
		select {
		case e := <-s.out:
			if e.Member.Name != fmt.Sprint(i) {
				t.Fatalf("event %d is %q", i, e.Member.Name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d not delivered", i)
		}
	}
	s.stop()
	s.stop() // idempotent
	if _, ok := <-s.out; ok {
		t.Fatal("channel not closed after stop")
	}
}

func TestEventKindString(t *testing.T) {
	for k, want := range map[EventKind]string{MemberJoin: "join", MemberLeave: "leave", MemberFail: "fail", 9: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
