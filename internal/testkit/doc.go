// Package testkit holds what the project's tests need again and again:
// polling waits with a deadline (WaitFor, WaitCollected), loggers (Logger,
// Quiet) and small Arrow records (Int64Record, Int64Range, Build).
//
// It is imported by tests only; nothing of the product imports it. Its
// functions keep no state between calls, so tests that run several nodes
// in one process, or run in parallel, can share it.
package testkit
