// Package receiver is one node's receive side (docs/design.md §3.3 and §3.5): it
// stores the shards other nodes send it in the spill store under
// (partition, task, attempt, seq), commits an attempt once its end marker
// and all its entries are in, decides with the dedup ledger which attempt
// serves each (task, partition), and serves the outputs it owns after the
// barrier: record batches for dataframes (Get), assembled new chunks for
// arrays (GetChunk).
//
// The caller's duties, in order:
//
//  1. Create one Receiver per node with New; give it a Committed func that
//     reports each commit to the shuffle's coordinator without blocking.
//  2. For each shuffle the node holds, create its Shuffle with NewShuffle
//     from the shuffle's shared state.
//  3. Hand the payload of every shards frame to HandlePayload, which
//     decodes it, stores it and recycles the payload when nothing it
//     stored refers to it; reply to the sender with what the error says
//     (*shuffle.Refusal, *shuffle.Busy, or a failure).
//  4. Serve reads with Get and GetChunk; they refuse partitions this node
//     does not own and shuffles not sealed. A read that packs many small
//     partitions into shared batches takes their rows as ranges instead,
//     in Get's order, with GatherPartition into one Gather (gather.go),
//     and copies them once per batch.
//
// A node that drains reads each partition it held out with Export; the
// partition's new owner stores and commits those pieces with Adopt, under
// their original keys, so its ledger keeps each (task, partition) once
// (handover.go).
//
// An entry of tiny runs (fewer than four rows per partition on average: a
// shuffle of many more partitions than a task has rows) is staged first;
// a full stage is gathered into one block of rows in partition order,
// which holds its runs' segments, and each partition gets a reference to
// its runs there (stage.go). Every read
// appends the stage before it looks.
//
// A resent entry (same task, attempt and seq) is stored once. An attempt of
// an older epoch never commits: its task runs again.
//
// Replays of dataframe tasks are checked (integrity.go): each end marker
// carries the attempt's row sums (rows and an order-independent sum of row
// hashes) for the partitions this node holds, whether their rows were sent
// here or not. When a later attempt of a task commits, its sums for the
// partitions an earlier attempt kept here are compared with that attempt's;
// a difference is reported with the commit (Commit.Differs) and the
// coordinator fails the shuffle with shuffle.ErrReplayDiffers, so rows of
// two versions of one input are never served together. A shuffle created
// with spec.OnDifferReplayWhole instead has its replays send every
// partition its rows, and the receiver gives the replay the task's
// partitions it holds in place of the earlier attempt (Commit.Replaced,
// dedup.Ledger.Supersede): reads then serve one attempt's rows of the task
// here, whether they were accumulated in memory or spilled. The sums kept cost
// 24 bytes per non-empty (task, partition) held, less than the segment the
// accumulator keeps for it.
//
// Concurrency: all methods are safe for concurrent use; Receive is called
// on one goroutine per request and may block while the spill store writes
// to disk. A Shuffle's state is guarded by its shuffle.State lock, the same
// lock the coordinator takes to move the epoch, so a commit's epoch check
// and an epoch move never interleave.
package receiver
