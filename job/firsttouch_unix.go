//go:build unix

package job

import (
	"fmt"
	"syscall"
	"time"
)

// firstTouch maps bytes of anonymous memory (advised as transparent huge
// pages when huge, where the system has them, and against them otherwise,
// which matters where THP is "always"), touches every page and unmaps it;
// it returns the time of the touches.
func firstTouch(bytes int64, huge bool) (time.Duration, error) {
	b, err := syscall.Mmap(-1, 0, int(bytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return 0, fmt.Errorf("job: first-touch ceiling: %w", err)
	}
	defer func() { _ = syscall.Munmap(b) }()
	adviseHuge(b, huge)
	return touchPages(b), nil
}
