//go:build !unix

package offheap

// mapBytes takes Go memory where mmap is not available: the Arena then
// only groups allocations.
func mapBytes(n int, _ bool) ([]byte, error) { return make([]byte, n), nil }

// unmapBytes leaves Go memory to the garbage collector.
func unmapBytes([]byte) {}
