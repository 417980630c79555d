// Package shuffle is one shuffle as one node holds it, the state every role
// on the node shares: the spec and what it implies (schema, codec,
// partitioner or array plan), the pinned members and the coordinator
// candidates, the current epoch's routing (Route: who owns and backs up each
// output partition, who is live, who coordinates in which term), and the
// shuffle's Phase on this node. It also holds the errors the roles (put,
// receiver, coordinator) return to peers and clients.
//
// The caller's duties:
//
//  1. Build a State with New when the shuffle is installed on the node.
//  2. Touch it on every use (idle shuffles expire).
//  3. Take Lock around any read-then-act that depends on the epoch: the
//     receiver's commit (its epoch check and the ledger) and the
//     coordinator's epoch move (route, phase, tracker) must see one
//     consistent route. Route reads it alone; RouteLocked and SetRouteLocked
//     are for callers that hold the lock.
//  4. Move the phase with Finish (seal or fail) and ReopenLocked (a loss
//     undid a seal).
//
// Concurrency: all methods are safe for concurrent use except those named
// ...Locked, which need the lock held. The exported fields are set by New
// and never change. A Route is immutable: a new epoch replaces it. The lock
// also guards each role's per-shuffle state (the receiver's attempts and
// ledger, the coordinator's tracker, the node's running puts): one lock, so
// that an epoch check and a route change are atomic.
package shuffle
