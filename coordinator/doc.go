// Package coordinator is the coordinator role of the shuffles a node
// created (docs/design.md §3.4 and §4): it drives each shuffle's barrier.Tracker
// with the begin, done and committed reports of the other nodes, answers
// barrier polls, broadcasts the seal or the failure, and on the loss of a
// member moves the shuffle to a new epoch, where the tracker chooses the
// replay set. It also holds the members' side of an epoch move
// (ApplyEpoch).
//
// The caller's duties, in order:
//
//  1. Create one Coordinator per node with New, giving it the Node it runs
//     on (broadcasts, background goroutines, dropping send queues).
//  2. For each shuffle this node creates, make its Shuffle with NewShuffle
//     from the shuffle's shared state.
//  3. Hand it the control messages meant for the coordinator: OpBegin to
//     Begin, OpDone and OpCommitted to Report, OpBarrier to Status; reply
//     with what they return. On every member, hand OpEpoch to ApplyEpoch.
//  4. Call Lose when a live member of a shuffle it coordinates fails or
//     leaves. A member that drains sends OpHandOver: call HandOver (the
//     epoch moves without it, nothing it committed replays, the seal waits),
//     then HandOverEnd on its OpHandedOver, or when it stops being a
//     member before that (the loss path, once).
//  5. When this node takes over a shuffle whose coordinator was lost (it is
//     the first live candidate, see package shuffle), move it to the
//     takeover's epoch, gather every live member's control.Facts, build
//     its Shuffle with Rebuild and act on the decision with Resume.
//
// Every decision (seal, fail, epoch move) carries the coordinator's node and
// term; members check them (shuffle.State.CheckDecision, CheckMove) and
// refuse those of a replaced coordinator.
//
// Decisions (seal, fail, a new epoch) are broadcast on goroutines started
// with Node.Go; Lose blocks until the survivors were told of the new epoch.
//
// Concurrency: all methods are safe for concurrent use. A Shuffle's state
// is guarded by its shuffle.State lock, the same lock the receiver takes to
// commit: an epoch move (route, tracker, phase) is atomic with respect to
// every commit, begin and report. Losses of one shuffle are handled one at
// a time, in the order they arrive.
package coordinator
