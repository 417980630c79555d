// Package service is one shufflenode node's shuffle engine, as thin wiring
// of the roles: it creates and closes shuffles, dispatches peer frames
// (Handle): shards payloads straight to the receiver (package receiver),
// control messages to the coordinator (package coordinator), the failover
// driver (package failover) and the drain (package drain); it follows
// membership and expires idle shuffles. Around it: the put path is package
// puts (which Service embeds; its splitter's batches go to the network
// through package shardnet), the read path is package reads (embedded
// too), the reports to the coordinators are batched by package reports, a
// client's barrier wait is package seal, a create's checks and pinned
// members are package create, nodes that run a shuffle's tasks without
// being its members are package guests, a planned departure and its
// handover are package drain, the table of the shuffles held and their
// tombstones is package held, a node's caps, memory split, batch gates and
// op budget are package limits, and what it tells of its shuffles is
// package status. Each shuffle's shared state (spec, members, epoch route,
// phase, the one lock) is a shuffle.State; control messages are package
// control.
//
// # A shuffle on one node
//
//  1. Create (any node; it becomes the coordinator; package create): validate
//     the spec, pin the live members, broadcast the spec. Every member computes the same
//     ownership map from the spec's seed and the pinned members.
//  2. Put (the node where an input task runs; package puts): register (task, attempt) with
//     the coordinator, partition each record batch, gather its rows per
//     destination node, encode them as Arrow IPC and hand them to the
//     splitter, which sends its batches through package shardnet straight
//     to the network. At the end send an end-of-task marker to every
//     member, wait for their acknowledgements, then report the task done.
//  3. Receive (every member; package receiver): decode, slice per output partition, store the
//     pieces under (partition, task, attempt, seq); a resent entry is
//     dropped by seq. An attempt commits when its marker and all its pieces
//     are in; the ledger decides which attempt serves each (task, partition),
//     so each row is served exactly once. Commits are reported to the
//     coordinator.
//  4. Barrier (packages coordinator and seal): the tracker seals the shuffle once every task is
//     committed everywhere with the totals its sender reported; it then tells
//     every member. A mismatch fails the shuffle on every member.
//  5. Get (the owner of a partition, after the seal; packages reads and receiver): pieces in (task,
//     attempt, seq) order, filtered by the ledger, concatenated into batches.
//  6. Close: every member frees the shuffle's memory and spill data.
//
// Node loss: the coordinator moves the shuffle to a new epoch without the
// lost node and tells the survivors; the barrier hands the replay set to the
// client (see package coordinator). A lost coordinator is replaced by the
// first live coordinator candidate, which moves the shuffle to the epoch
// without it and rebuilds the barrier from the members' facts. Who acts on
// a loss, when, and with what quorum is decided by the pure core in package
// recovery (which also holds the split-brain argument); package failover
// drives it: it follows membership, pings the members the core asks about
// and performs its decisions (takeovers, epoch moves, rejoin checks,
// fencing, restarts). This package gives failover what it needs of the
// node (recovery.go): a node asked about a shuffle it does not hold,
// though the records know it, answers "ask another node", and a barrier
// wait on a node without quorum fails with ErrNoQuorum.
// The coordinator also writes the shuffle's spec, lost list and term as a
// record in the network's records (kad-dht; package record), and a member
// that missed the create installs the shuffle from it (records.go).
//
// # Concurrency
//
// All exported methods are safe for concurrent use. Handle is called by the
// network on one goroutine per request; it may block while the spill store
// writes to disk (back-pressure on the sender).
package service
