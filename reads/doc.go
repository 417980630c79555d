// Package reads is one node's read path (docs/design.md §3.5): where each
// output partition of a shuffle lives (Locations; Layout, the
// `__partitioned__` form of an array rechunk's result), reading a
// partition this node owns after the barrier (Get, GetPooled, GetChunk,
// which the receiver serves; GatherPartition, a small partition's rows as
// ranges for a packed batch), and reading one wherever it is over the
// cluster's own streams (Fetch, FetchChunk from the reading side,
// HandleStream on the owner; see fetch.go for the format).
//
// The caller's duties: build one Reader per node (New) before the node
// takes requests, give the cluster HandleStream as its stream handler, and
// have Host.Lookup find the shuffles the node holds.
//
// # Concurrency
//
// All methods are safe for concurrent use; the reads block while they
// stream, and GetPooled and GatherPartition wait for room under
// Config.Outputs.
package reads
