// Package barrier is the coordinator's ledger and barrier for one shuffle
// (docs/design.md §3.3-§3.4): which attempt of each input task is done, what its
// sender sent to each receiver, which receivers committed it, and whether
// every task is committed everywhere with matching totals.
//
// A Tracker is a pure state machine in the style of etcd-io/raft: it has no
// goroutines, sockets, storage or clocks. Each method takes one event and
// returns a Decision the caller acts on.
//
// The protocol it models: a sender that finishes (task, attempt) sends an
// end-of-task marker to every receiver of the epoch, carrying the Totals it
// sent to that receiver (zero for a receiver that got no data), and reports
// TaskDone with those totals. A receiver commits (task, attempt) when it has
// the marker and all pieces, and reports Committed with the Totals it holds.
// The first attempt of a task reported done is the task's done attempt. The
// barrier is reached when every task's done attempt is committed by every
// receiver of its epoch with totals equal to the sender's.
//
// The caller's duties, in order:
//
//  1. Create one Tracker per shuffle with New when the shuffle is created.
//  2. Feed it every TaskDone and Committed report, in any order, duplicates
//     included. Reports may precede the TaskDone they match.
//  3. Act on each Decision: on Seal, seal the shuffle (receivers refuse new
//     data for the epoch, drop uncommitted data and verify what they hold);
//     on Fail, fail the shuffle everywhere with that error. Seal and Fail
//     each happen at most once; after either, reports are rejected with
//     ErrSealed or ErrFailed (a caller may ignore ErrSealed for late
//     duplicates).
//  4. Call Fail for failures found elsewhere (a receiver's post-seal check,
//     a lost coordinator, a cancel), and SetReceivers when the epoch moves
//     (refusing reports of attempts from older epochs before they get here).
//
// An error returned with a Decision means the event was rejected (bad task
// ID, unknown receiver, wrong phase) and the Tracker is unchanged; a
// mismatch is not an error of the event but an outcome, returned as
// Decision.Fail.
//
// Concurrency: a Tracker is not safe for concurrent use; one goroutine (the
// shuffle's coordinator loop) drives it.
//
// Cost: each event is O(1) amortised except TaskDone, which is O(receivers)
// (O(receivers log receivers) for the map it is given). Memory per task is
// one Totals and one bit per receiver, plus reports of attempts that are not
// the done one.
package barrier
