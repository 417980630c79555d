package spill

import (
	"fmt"
	"syscall"
)

// Badger memory-maps its value-log files (sparse, twice their size) and writes into the
// mapping; its tables are written the same way. On a file system without room for a page it
// touches, the process gets SIGBUS, which no error handling can catch. So every write checks
// first that the file system holds room for it and for what badger may write on its own
// meanwhile (memtable flushes, compactions), and fails with ENOSPC, before anything is mapped,
// when it does not.

// roomMargin is the room a write leaves free on top of its own bytes: two memtables flushing
// to level-0 tables and a compaction of them, plus slack for value-log headers and badger's
// manifest.
func roomMargin(budget int64) int64 { return 4*badgerScale(budget) + 8<<20 }

// freeBytes returns the bytes an unprivileged writer may still use in the file system of dir.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// checkRoom fails with an error wrapping syscall.ENOSPC unless the file system of dir has
// room for n bytes and the margin.
func (d *badgerDisk) checkRoom(n int64) error {
	free, err := d.free(d.dir)
	if err != nil {
		return err
	}
	if need := n + roomMargin(d.budget); free < need {
		return fmt.Errorf("%s: %d bytes free, writing %d needs %d with badger's margin: %w",
			d.dir, free, n, need, syscall.ENOSPC)
	}
	return nil
}
