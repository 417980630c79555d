// Package splitter is a node's send side, the node-local splitting service:
// it cuts the input tasks that run on this node into shards, gathers them per
// destination node, buffers them per (shuffle, destination) and batch-sends
// them to their owners.
//
// # Cutting
//
// A Cut is one input task attempt. Cut.Record partitions a record batch
// (table.Partitioner), gathers its rows per destination sorted by partition
// (table.Split) and encodes them as one Arrow IPC entry per destination.
// The groups' buffers come from the splitter's pool (mempool.Pool) and go back to
// it when the message that carried the entry was acknowledged or given up
// (Splitter.AddReleased): the entry is written from them without a copy, and
// the next groups reuse them instead of allocating. Cut.Chunk cuts an old
// array chunk into its ndsplits (splitaxes.Plan, lazily) and copies each
// piece straight into its destination's entry (rechunk.AppendPiece). An entry (shard.Entry) carries the runs of output
// partitions it holds; Cut numbers the entries of each destination and sums
// their totals. Cut.End sends the end-of-task markers and waits for them.
//
// # Batching
//
// A Splitter is shared by every input task on the node. Entries go to Add. A buffer is sent when it
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
// after losing data. Messages complete in queue order as far as their End
// markers go: a marker's Done waits until every message queued before it to
// that destination was acknowledged (a busy receiver may take a later message
// first), and reports the first failure among them. So Cut.End returning nil
// means every receiver holds every entry of the attempt, not only its marker.
//
// # Concurrency
//
// All methods are safe for concurrent use. The Sender is called from the
// splitter's own goroutines, at most MaxInFlight at a time per queue.
package splitter
