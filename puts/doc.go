// Package puts runs the input tasks put on one node (docs/design.md §3.2):
// it checks an input against its shuffle (schema, or an array chunk's
// dtype and shape), registers the attempt with the coordinator, hands the
// input to the splitter, which cuts it and sends its batches to the
// network, waits until every receiver acknowledged the end markers, and
// reports the task done. A replay of a done task sends only the partitions
// that moved since. A put whose reply was lost is recognised when it is
// asked again (its task is done: the put is skipped).
//
// The caller's duties: build one Runner per node (New) once the node is
// on its cluster; Lookup finds the put side of a shuffle (NewShuffle, over
// the node's map of local puts, which the caller may read under the
// shuffle's lock); DrainRefusal refuses puts while the node drains.
//
// # Concurrency
//
// Put and PutChunk are safe for concurrent use; each blocks until its task
// is done or failed, waiting for room in the send buffers and under
// Config.Inputs (back-pressure).
package puts
