//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package spill

import "os"

// lockMarker creates (or opens) the marker file. Without flock, nothing stops two stores from
// sharing a directory: callers must give each store its own.
func lockMarker(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}
