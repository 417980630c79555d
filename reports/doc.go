// Package reports carries one node's control reports to the coordinators
// of its shuffles in batches, and unbatches them on the coordinator: the
// receivers' commit reports (Reporter.Commit, ReportCommits) and the
// senders' begin and done reports of their puts (Reporter.Task,
// AnswerTasks), and a member's request that the coordinator fail a
// shuffle it cannot go on with (Reporter.Abort).
//
// Both go through one batcher (queue.go): a report waits while the
// previous batch to its destination is in flight, then goes with every
// report that arrived meanwhile, in one message. A node that commits or
// finishes the tasks of a 10,000-task shuffle thus sends as many messages
// as the coordinator's round trips allow, not one per task, and a report is
// never later than one round trip behind its event. A lone report goes as
// the single message it is.
//
// The caller's duties: build one Reporter per node (New) with a Request
// that sends a control message and a Go that runs background work the
// node's Close waits for; on the coordinator, hand control.OpTasks
// messages to AnswerTasks and batched control.OpCommitted messages to
// ReportCommits.
//
// # Concurrency
//
// A Reporter is safe for concurrent use. Commit does not block; Task
// blocks until the coordinator answered its report or ctx ends. One sender
// goroutine per destination runs while reports wait for it.
package reports
