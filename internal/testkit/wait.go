package testkit

import (
	"runtime"
	"testing"
	"time"
)

// poll is how often WaitFor and WaitCollected check their condition.
const poll = 5 * time.Millisecond

// WaitFor polls cond until it holds, failing t (naming what it waited for)
// if it does not within d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	wait(t, d, what, cond, func() {})
}

// WaitCollected is WaitFor that runs a garbage collection before every
// poll, for conditions that cleanups or finalizers make true (an arena
// unmapped once unreachable).
func WaitCollected(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	wait(t, d, what, cond, runtime.GC)
}

// wait polls cond every poll, calling between before each try, until it
// holds or d passed.
func wait(t testing.TB, d time.Duration, what string, cond func() bool, between func()) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		between()
		time.Sleep(poll)
	}
}
