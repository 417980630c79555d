package clock

import (
	"slices"
	"sync"
	"time"
)

// Fake is a Clock whose time moves only when its owner calls Advance. Its
// timers and tickers fire during Advance, in the order of their times,
// each send dropped if the channel's one slot is full (as a time.Ticker
// drops ticks). Safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	pending []*fakeTimer // timers and tickers not stopped, not yet fired out
}

// NewFake returns a Fake whose time is start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now is f's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires once f's time reaches now+d (at
// once if d <= 0).
func (f *Fake) NewTimer(d time.Duration) Timer { return f.add(d, 0) }

// NewTicker returns a ticker that fires every d of f's time. d must be
// positive, as for time.NewTicker.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for Fake.NewTicker")
	}
	return fakeTicker{f.add(d, d)}
}

// Pending is the number of timers and tickers that have not fired out or
// been stopped: a test waits for the goroutine under test to arm its
// timer before it calls Advance.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// Advance moves f's time on by d, firing every timer and ticker whose
// time comes meanwhile, the earliest first, each at its own time.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := f.now.Add(d)
	for {
		t := f.next()
		if t == nil || t.at.After(end) {
			break
		}
		f.now = t.at
		f.fire(t)
	}
	f.now = end
}

// next is the pending timer due first, nil if none. Called with f.mu held.
func (f *Fake) next() *fakeTimer {
	if len(f.pending) == 0 {
		return nil
	}
	return slices.MinFunc(f.pending, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
}

// fire sends t's time, then re-arms a ticker or retires a timer. Called
// with f.mu held.
func (f *Fake) fire(t *fakeTimer) {
	select {
	case t.c <- t.at:
	default: // the reader has not taken the last one: dropped
	}
	if t.period > 0 {
		t.at = t.at.Add(t.period)
		return
	}
	f.remove(t)
}

// add arms a timer (period 0) or ticker due d from now.
func (f *Fake) add(d, period time.Duration) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), at: f.now.Add(d), period: period}
	f.pending = append(f.pending, t)
	if d <= 0 {
		f.fire(t)
	}
	return t
}

// remove drops t from the pending ones, reporting whether it was there.
// Called with f.mu held.
func (f *Fake) remove(t *fakeTimer) bool {
	i := slices.Index(f.pending, t)
	if i < 0 {
		return false
	}
	f.pending = slices.Delete(f.pending, i, i+1)
	return true
}

// fakeTimer is a Fake's timer (period 0) or ticker.
type fakeTimer struct {
	f      *Fake
	c      chan time.Time
	at     time.Time // when it fires next
	period time.Duration
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// Stop stops t; for a timer it reports whether it had not fired yet.
func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.remove(t)
}

// fakeTicker is a Fake's ticker.
type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) C() <-chan time.Time { return k.t.c }
func (k fakeTicker) Stop()               { k.t.Stop() }
