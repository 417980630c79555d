//go:build unix && !linux

package offheap

// adviseHuge does nothing where transparent huge pages do not exist.
func adviseHuge([]byte, bool) {}
