package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

var epoch = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// received returns what c holds now, ok false if nothing.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case at := <-c:
		return at, true
	default:
		return time.Time{}, false
	}
}

// TestFakeTimer: a timer fires once its time comes, at its own time, and
// a stopped one never does.
func TestFakeTimer(t *testing.T) {
	f := NewFake(epoch)
	a, b := f.NewTimer(2*time.Second), f.NewTimer(time.Second)
	f.Advance(1500 * time.Millisecond)
	if _, ok := received(a.C()); ok {
		t.Fatal("a 2 s timer fired after 1.5 s")
	}
	if at, ok := received(b.C()); !ok || !at.Equal(epoch.Add(time.Second)) {
		t.Fatalf("1 s timer after 1.5 s: %v, %v; want fired at +1s", at, ok)
	}
	if b.Stop() {
		t.Fatal("Stop of a fired timer reported it running")
	}
	if !a.Stop() || f.Pending() != 0 {
		t.Fatalf("Stop of a running timer: %d pending after, want 0", f.Pending())
	}
	f.Advance(time.Hour)
	if _, ok := received(a.C()); ok {
		t.Fatal("a stopped timer fired")
	}
	if got := f.Now(); !got.Equal(epoch.Add(time.Hour + 1500*time.Millisecond)) {
		t.Fatalf("Now = %v after advancing 1h1.5s from %v", got, epoch)
	}
	if _, ok := received(f.NewTimer(0).C()); !ok {
		t.Fatal("a timer of 0 did not fire at once")
	}
}

// TestFakeTicker: a ticker fires every period; ticks its reader misses
// are dropped, as with time.Ticker, and none come once it is stopped.
func TestFakeTicker(t *testing.T) {
	f := NewFake(epoch)
	k := f.NewTicker(time.Second)
	f.Advance(time.Second)
	if at, ok := received(k.C()); !ok || !at.Equal(epoch.Add(time.Second)) {
		t.Fatalf("tick after 1 s: %v, %v", at, ok)
	}
	f.Advance(3 * time.Second)
	if at, ok := received(k.C()); !ok || !at.Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("first tick kept of three: %v, %v; want the one at +2s", at, ok)
	}
	if _, ok := received(k.C()); ok {
		t.Fatal("a missed tick was queued")
	}
	k.Stop()
	f.Advance(time.Minute)
	if _, ok := received(k.C()); ok || f.Pending() != 0 {
		t.Fatalf("ticked after Stop (%v), %d pending", ok, f.Pending())
	}
}

// TestSleep: Sleep returns true once d passed on the clock, false when
// ctx ends first; Real in a synctest bubble waits on the bubble's time.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := NewFake(epoch)
		done := make(chan bool)
		go func() { done <- Sleep(context.Background(), f, time.Minute) }()
		synctest.Wait() // the goroutine armed its timer and waits on it
		f.Advance(time.Minute - 1)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Sleep of a minute returned before a minute passed")
		default:
		}
		f.Advance(1)
		if !<-done {
			t.Fatal("Sleep on a Fake advanced past it reported false")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		if Sleep(ctx, Or(nil), time.Hour) {
			t.Fatal("Sleep of an hour under a 1 s context reported true")
		}
		if took := Since(Real{}, start); took != time.Second {
			t.Fatalf("Sleep took %v of the bubble's time, want 1s", took)
		}
	})
}
