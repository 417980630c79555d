package offheap

import "syscall"

// hugeBytes is the size of a transparent huge page on amd64 and arm64.
const hugeBytes = 2 << 20

// adviseHuge asks for transparent huge pages on mappings that can hold
// one (the kernel may decline; THP "never" ignores it).
func adviseHuge(b []byte) {
	if len(b) >= hugeBytes {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}
