package splitter

import (
	"testing"
	"testing/synctest"
	"time"
)

// sentBatches is how many batches f delivered.
func sentBatches(f *fakeSender) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batches
}

// done reports whether ch has a value (nil: an error is reported).
func done(t *testing.T, ch <-chan error) bool {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Errorf("end marker: %v", err)
		}
		return true
	default:
		return false
	}
}

// lingering returns a splitter with linger whose sender is f, closed
// when t ends.
func lingering(t *testing.T, f *fakeSender, linger time.Duration) *Splitter {
	t.Helper()
	s, err := New(Config{Linger: linger}, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestMarkerGoesAtOnceWhenNoTaskCuts: with no other task of the shuffle
// being cut on the node, an end marker is sent at once, however long
// Linger is.
func TestMarkerGoesAtOnceWhenNoTaskCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		s := lingering(t, f, time.Hour)
		ch := endWait(t, s, "s", "d", 1)
		synctest.Wait()
		if !done(t, ch) {
			t.Fatal("the marker waited with no other task cutting")
		}
	})
}

// TestMarkerLingersWhileOthersCut: while another task of the shuffle is
// being cut, a marker waits for it up to Linger, then goes.
func TestMarkerLingersWhileOthersCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		s := lingering(t, f, 10*time.Millisecond)
		other := s.NewCut(Route{Shuffle: "s"})
		defer other.Close()
		ch := endWait(t, s, "s", "d", 1)
		synctest.Wait()
		if done(t, ch) || sentBatches(f) != 0 {
			t.Fatal("the marker went at once while another task was cutting")
		}
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if !done(t, ch) {
			t.Fatal("the marker still waits after Linger")
		}
	})
}

// TestMarkersOfTasksEndingTogetherShareAMessage: markers that wait for a
// task still being cut go in one message once it closes, without waiting
// out Linger.
func TestMarkersOfTasksEndingTogetherShareAMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		s := lingering(t, f, time.Hour)
		a, b := s.NewCut(Route{Shuffle: "s"}), s.NewCut(Route{Shuffle: "s"})
		first, second := endWait(t, s, "s", "d", 1), endWait(t, s, "s", "d", 2)
		a.Close()
		a.Close() // idempotent: b still counts
		synctest.Wait()
		if done(t, first) || done(t, second) {
			t.Fatal("markers went while a task was still cutting")
		}
		b.Close()
		synctest.Wait()
		if !done(t, first) || !done(t, second) {
			t.Fatal("markers still wait after the last task closed")
		}
		if n := sentBatches(f); n != 1 {
			t.Errorf("%d messages for two markers that waited together, want 1", n)
		}
	})
}

// TestMarkerWaitsForAnExpectedCut: a task still registering (Expect)
// counts as being cut: a marker waits for it as for a Cut, and goes once
// the expectation ends, whether a Cut took its place (which then counts
// until it closes) or none did; a second release changes nothing.
func TestMarkerWaitsForAnExpectedCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake()
		s := lingering(t, f, time.Hour)
		expected, unmade := s.Expect("s"), s.Expect("s")
		ch := endWait(t, s, "s", "d", 1)
		synctest.Wait()
		if done(t, ch) {
			t.Fatal("the marker went while two tasks were registering")
		}
		c := s.NewCut(Route{Shuffle: "s"})
		expected()
		expected() // idempotent: the other expectation and the Cut still count
		unmade()
		synctest.Wait()
		if done(t, ch) {
			t.Fatal("the marker went while the expected task was being cut")
		}
		c.Close()
		synctest.Wait()
		if !done(t, ch) {
			t.Fatal("the marker still waits with nothing registering or cutting")
		}
	})
}
