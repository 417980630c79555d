// Package mempool is an Arrow memory.Allocator that keeps freed buffers for
// the next allocation of their size class, for Arrow data of a known,
// short life made again and again: the demos' generated inputs (made, put,
// released, one task after another). A Parquet reader's records and a
// Parquet writer's pages over it measured no faster and held more memory
// (the pool keeps freed buffers until the collector empties it), so those
// stay on Go memory.
//
// Freshly allocated Go memory must be cleared, on a virtual machine first
// touched, and later collected; a pooled buffer is mapped already and,
// reused soon, still in cache. Allocate returns zeroed bytes as
// memory.GoAllocator does, so a reader never sees what an earlier owner
// left there.
//
// # Caller's duties
//
// A buffer is freed once, by its owner, when nothing uses its bytes any
// more: for an Arrow record, on its last Release. Memory freed early is
// handed out again and overwritten; in test binaries Free poisons every
// freed buffer so that such a bug shows as wrong data.
//
// # Concurrency
//
// An Allocator is safe for concurrent use.
package mempool
