// Package splitter is a node's send side: it buffers the shards that input
// tasks on this node produce, one buffer per (shuffle, destination node), and
// batch-sends them to their owners.
//
// A Splitter is shared by every input task on the node. Callers cut their input
// into Entries (one per task, attempt and destination; an Entry carries the runs
// of output partitions it holds) and hand them to Add. A buffer is sent when it
// passes Config.BufferBytes, when a task ends (End), or when the node's send
// budget is exhausted and memory has to be freed. One message carries entries of
// many tasks, so small tasks do not mean small messages.
//
// # Back-pressure
//
// Bytes buffered or in flight are charged to a node-wide budget
// (Config.MemoryLimit). Add waits while the budget is exhausted; bytes come back
// when the receiver acknowledges the message that carried them. Nothing is ever
// dropped to make room.
//
// # Delivery
//
// Each (shuffle, destination) queue has up to Config.MaxInFlight messages in
// flight. The Sender reports whether a failure may be retried (an error that
// implements RetryAfter); receivers deduplicate entries by (task, attempt, seq),
// so resending a message whose acknowledgement was lost is safe. A permanent
// failure fails the queue: every pending End of that queue is completed with
// the error and later Adds to it return it, so a task can never be reported done
// after losing data.
//
// # Concurrency
//
// All methods are safe for concurrent use. The Sender is called from the
// splitter's own goroutines, at most MaxInFlight at a time per queue.
package splitter
