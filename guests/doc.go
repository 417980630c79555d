// Package guests lets a node run the input tasks of a shuffle it is not a
// member of. A node that joined the cluster after a shuffle was created is
// not one of its pinned members: it owns none of its output partitions
// (ownership stays as created). It can still run the shuffle's input
// tasks: asked to put a task of a shuffle it does not hold, it installs
// the shuffle from the cluster's record (package record) as a guest, a
// sender only, and runs the put as any member would (MayJoin says whether
// it may). Its begin and done reports go to the coordinator, which counts
// its tasks in the barrier like a member's (the barrier knows senders by
// name, not by membership); its shards go to the owners of the record's
// epoch.
//
// A guest hears none of the coordinator's decisions (they go to members):
// when the epoch moves, its next begin or done report is refused as stale
// (or, when the coordinator was lost, finds it gone), the put fails with
// shuffle.ErrStaleEpoch or the Unavailable sentinel (the client runs the
// task again), and the guest reads the record again for the new epoch and
// coordinator (Refresher.AfterPut). A successor that takes over learns the
// guest's finished tasks from what the receivers committed
// (coordinator.Shuffle's inferDone), as it does for a lost sender's.
// After the seal every task is done, and a guest's put of one is skipped.
// Every other call about the shuffle (barrier, locations, status, reads)
// is answered as by any node that does not hold it: "ask another node"
// (its view of the epoch may be old). The failover driver leaves guests
// out (a guest takes part in no takeover or rejoin check); a guest's
// entry is dropped when it has been idle for the idle expiry.
//
// The caller's duties: keep guests in its map of shuffles but find them
// only for puts (Is tells them apart), install one from its record when
// MayJoin allows, and call AfterPut after each put.
//
// # Concurrency
//
// A Refresher is safe for concurrent use as far as its Config's funcs are;
// AfterPut takes the shuffle's lock to move its epoch.
package guests
