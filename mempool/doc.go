// Package mempool is an Arrow memory.Allocator that reuses freed buffers
// (Pool): for short-lived buffers on a hot path, whose fresh allocation
// costs clearing, page faults and collections.
package mempool
