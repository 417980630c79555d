// Package drain drives a node's planned departure (docs/design.md): the
// pure core recovery.Drain decides each step (refuse new puts, wait for
// the running ones, hand each shuffle over, leave) and recovery.PlanHandOver
// decides whether a shuffle needs a handover; this package performs them.
//
// The handover of a shuffle: the draining node asks the shuffle's
// coordinator to move the epoch without it as a planned departure
// (control.OpHandOver), reads out the committed pieces of each output
// partition it held (receiver.Export) and sends them to the partition's
// new owner in handover frames (TypeHandOver), which the owner stores and
// commits under their original keys (receiver.Adopt), then tells the
// coordinator it finished (control.OpHandedOver). The coordinator holds
// the seal until then, and falls back to the loss path if the node says
// the copy failed or is lost before it says anything.
//
// The caller's duties: build one Drainer per node (New) with a Host, the
// node's receiver and coordinator; hand it the handover frames it
// receives (HandleFrame) and, on a shuffle's coordinator, the
// control.OpHandOver and control.OpHandedOver messages (Answer); refuse
// new puts with Refusal. Drain runs the drain; RequestDrain asks the
// process that runs the node for one.
//
// # Concurrency
//
// A Drainer is safe for concurrent use; one Drain runs at a time. Drain
// blocks until the node may leave or its context ends.
package drain
