// Package budget is a budget of bytes that work reserves before it
// allocates: a node's node-side operations (joins and sorts of output
// partitions) take their estimated memory from one Budget, so that however
// many clients ask at once, the ops running on a node hold about the
// budget, and the rest wait their turn instead of running the node out of
// memory.
//
// Acquire waits in arrival order: a large request at the head of the queue
// is not overtaken by smaller ones behind it, so it cannot starve. A
// request larger than the whole budget is granted the whole budget, so it
// runs alone rather than never. Charge adds bytes without waiting, for
// memory an op learned of only once it had it (a partition read from
// another node): the budget may then be overdrawn, and the next requests
// wait until it is not.
package budget
