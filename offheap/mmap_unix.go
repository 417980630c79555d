//go:build unix

package offheap

import "syscall"

// mapBytes maps n bytes of anonymous, private, zeroed memory.
func mapBytes(n int) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	adviseHuge(b)
	return b, nil
}

// unmapBytes unmaps a mapping of mapBytes.
func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
