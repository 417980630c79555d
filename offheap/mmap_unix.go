//go:build unix

package offheap

import "syscall"

// mapBytes maps n bytes of anonymous, private, zeroed memory, advised as
// transparent huge pages when huge, and against them otherwise.
func mapBytes(n int, huge bool) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	adviseHuge(b, huge)
	return b, nil
}

// unmapBytes unmaps a mapping of mapBytes.
func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
