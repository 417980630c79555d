package job

import "syscall"

// adviseHuge asks for transparent huge pages on b, as offheap's arenas do
// (ignored where THP is "never"), or, when !huge, for none.
func adviseHuge(b []byte, huge bool) {
	advice := syscall.MADV_NOHUGEPAGE
	if huge {
		advice = syscall.MADV_HUGEPAGE
	}
	_ = syscall.Madvise(b, advice)
}
