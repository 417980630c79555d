// Package seal waits, for a client, until a shuffle is sealed on every
// member, or failed, or some task has no done attempt (docs/design.md
// §3.4). Any member may be asked: a Waiter polls the shuffle's current
// coordinator (control.OpBarrier, or the node's own coordinator part),
// and while the coordinator cannot be reached (it was lost and its
// successor is taking over) it keeps asking, the current coordinator each
// time, for up to Config.LossWait. A node that sees the coordinator down
// and too few members up for a takeover (package recovery decides) gives
// up at once with Config.NoQuorum's error: nobody on its side will
// replace the coordinator.
//
// The caller's duties: call Wait once every put of the shuffle returned
// (a task still being put counts as pending), and run each task the
// Result's Replay names again with a new attempt number.
//
// # Concurrency
//
// A Waiter is safe for concurrent use; Wait blocks until an outcome or
// until ctx ends.
package seal
