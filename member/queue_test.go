package member

import (
	"fmt"
	"testing"
)

// TestQueueKeepsOrderAndNeverBlocks: many pushes with nobody reading do not
// block, and the events come out in order; Stop closes the channel.
func TestQueueKeepsOrderAndNeverBlocks(t *testing.T) {
	q := NewQueue(1)
	for i := range 500 {
		q.Push(Event{Kind: Joined, Member: Member{Name: fmt.Sprint(i)}})
	}
	go q.Pump()
	for i := 500; i < 1000; i++ {
		q.Push(Event{Kind: Joined, Member: Member{Name: fmt.Sprint(i)}})
	}
	for i := range 1000 {
		if e := <-q.C; e.Member.Name != fmt.Sprint(i) {
			t.Fatalf("event %d is %q", i, e.Member.Name)
		}
	}
	q.Stop()
	q.Stop()
	if _, ok := <-q.C; ok {
		t.Fatal("channel open after Stop")
	}
}
