// Package held is the table of the shuffles one node holds, by ID, with
// tombstones: why the most recently dropped ones are gone (closed,
// expired, or going on without this node), so that a late call about one
// gets that reason rather than only "unknown". A table closes once, with
// its node: it then finds nothing, and runs no more work (IfOpen), so
// that a node's Close can wait for the work it started.
//
// # Concurrency
//
// A Table is safe for concurrent use; one lock guards the map, the
// tombstones and the closed flag, and no func passed to a Table's method
// may call that Table.
package held
