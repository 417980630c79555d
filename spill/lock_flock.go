//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package spill

import (
	"fmt"
	"os"
	"syscall"
)

// lockMarker creates (or opens) the marker file and takes an exclusive, non-blocking flock on
// it, so that no other store, in this process or another, wipes a directory in use.
func lockMarker(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s is in use by another store: %w", ErrConfig, path, err)
	}
	return f, nil
}
