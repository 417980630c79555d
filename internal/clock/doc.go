// Package clock is the time source of the components whose timers decide
// what a node does: failure handling, rejoin checks, the coordinator's
// wait for the failure detector, idle expiry. Each takes a Clock in its
// Config; nil means Real, the wall clock.
//
// Tests make time deterministic in one of two ways. Inside a
// testing/synctest bubble the real clock is already the bubble's fake
// one, and time advances only when every goroutine of the bubble is
// blocked: a test of a component that runs wholly in the process (over
// simnet, say) runs its timers in no wall time at all. Where a bubble does
// not fit (a test that also uses sockets or files, whose waits do not
// count as blocked), a Fake, moved on by the test with Advance, drives the
// component's timers alone.
//
// # Concurrency
//
// Real and Fake are safe for concurrent use, and so are the timers and
// tickers they make.
package clock
