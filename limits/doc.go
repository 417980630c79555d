// Package limits bounds what one node takes on, so that nothing clients or
// peers ask makes it allocate past its budgets (docs/design.md §8):
//
//   - Caps: how many shuffles a node holds, and how many tasks, partitions
//     and plan runs one spec may have; checked before anything is planned.
//   - Gate: the memory of the record batches that puts and reads hold
//     outside the send buffers and the store; a put or read reserves room
//     for its next batch before it reads or gathers it, and waits over the
//     gate's size.
//   - Ops: the budget of node-side ops (joins and sorts of output
//     partitions); an op reserves what it will hold of its inputs before it
//     reads them, in passes if it can, and waits while the ops running hold
//     the budget.
//
// # Concurrency
//
// Caps is a value. Gate and Ops are safe for concurrent use; a Hold (one
// put's or read's share of a Gate) and an OpMemory belong to one goroutine.
package limits
