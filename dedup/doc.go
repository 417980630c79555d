// Package dedup is the receivers' exactly-once ledger (docs/design.md §3.3):
// Ledger decides which attempt of each input task serves each output
// partition, so that repeated attempts and replays never serve a row twice.
// Bitset is the compact set of partitions it is built on (also used for the
// partitions a node owns or holds in an epoch).
//
// A Ledger is a pure state machine in the style of etcd-io/raft: no
// goroutines, I/O or clocks. One receiver keeps one Ledger per shuffle.
//
// The caller's duties, in order:
//
//  1. Create the Ledger with NewLedger when the shuffle becomes known.
//  2. When (task, attempt) has its end-of-task marker and all its pieces,
//     call Commit with every output partition this receiver owned in that
//     attempt's epoch (also those that got no rows). Keep the attempt's data
//     only for the partitions Commit returns; drop the rest.
//  3. When serving a partition, keep a shard of (task, attempt) only if
//     Visible says so; Committed says which attempt won.
//  4. Wrap errors with the shuffle ID before reporting them.
//
// Concurrency: neither Ledger nor Bitset is safe for concurrent use; the
// receiver's goroutine for the shuffle drives its Ledger, or the caller
// holds a lock around it.
package dedup
