package offheap

import "syscall"

// adviseHuge asks for transparent huge pages on mappings that can hold
// one (the kernel may decline; THP "never" ignores it), or, when !huge,
// for none (which matters where THP is "always").
func adviseHuge(b []byte, huge bool) {
	switch {
	case !huge:
		_ = syscall.Madvise(b, syscall.MADV_NOHUGEPAGE)
	case len(b) >= HugePageBytes:
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}
