package durable

import (
	"os"

	"golang.org/x/sys/unix"
)

// StartWriteback asks the kernel to start writing f's dirty pages to disk,
// without waiting for it (best effort: errors surface at the later sync).
func StartWriteback(f *os.File) {
	_ = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
