// Package recovery holds what a shuffle needs when attempts repeat or nodes
// are lost (DESIGN.md §3.3 and §4). So far it has the receivers' dedup
// Ledger, which gives exactly once per (input task, output partition), and
// Bitset, the compact set of partitions it is built on.
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
package recovery
