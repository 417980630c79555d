package job

import "syscall"

// adviseHuge asks for transparent huge pages on b, as offheap's arenas do
// (ignored where THP is "never").
func adviseHuge(b []byte) { _ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) }
