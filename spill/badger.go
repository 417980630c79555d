package spill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

const (
	// badgerFlushBytes bounds one badger WriteBatch: a much larger batch makes badger remap
	// its value log on every entry (DEPENDENCIES.md).
	badgerFlushBytes = 64 << 20
	// markerName is the file that marks a directory as a spill directory Open may wipe. It is
	// also the lock that keeps two stores out of one directory.
	markerName = ".shufflenode-spill"
)

// badgerDisk is the production Disk: badger tuned as a spill buffer, not a database. Badger
// itself opens at the first write: a node whose shuffles fit in memory never pays for its
// memtables, caches and goroutines (at a 1 GiB budget 21 MB of heap per node, which also raised
// the collector's goal by as much: 83 MB over the 4 nodes of an in-process demo).
type badgerDisk struct {
	dir     string
	budget  int64
	log     *slog.Logger
	lock    *os.File // the locked marker file
	created bool     // Open created dir: Close removes it

	free func(dir string) (int64, error) // freeBytes; tests replace it

	mu     sync.Mutex                // serializes opening and closing badger
	db     atomic.Pointer[badger.DB] // nil until the first write
	closed bool
}

// badgerOptions tunes badger as a spill buffer (DEPENDENCIES.md): small memtables and
// caches, values (groups of pieces) in the value log, no compression, no conflict detection,
// no metrics. Its memory scales with the store's budget (badgerScale): at budgets of 256 MiB
// and more, memtables 16 MiB x 2 and caches of 16 MiB each, ~60 MiB of heap; at 48 MiB,
// 3 MiB each.
func badgerOptions(dir string, budget int64, log *slog.Logger) badger.Options {
	scale := badgerScale(budget)
	return badger.DefaultOptions(dir).
		WithMemTableSize(scale).
		WithNumMemtables(2).
		WithBlockCacheSize(scale).
		WithIndexCacheSize(scale).
		WithBaseTableSize(min(scale/2, 2<<20)).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithValueThreshold(1 << 10).
		WithValueLogFileSize(256 << 20).
		WithNumCompactors(2).
		WithCompression(options.None).
		WithDetectConflicts(false).
		WithMetricsEnabled(false).
		WithSyncWrites(false).
		WithLogger(badgerLogger{log.With("component", "badger")})
}

// badgerScale is the size of each of badger's memtables and caches for a store budget: a
// sixteenth of it, between 1 MiB and 16 MiB. Spilled pieces go to the value log in groups,
// so the LSM holds one small entry per group and small memtables flush rarely.
func badgerScale(budget int64) int64 {
	return min(max(budget/16, 1<<20), 16<<20)
}

// openBadger claims dir, takes its lock and wipes what a previous run left there; badger
// opens in it at the first write (badgerDisk.open).
func openBadger(dir string, budget int64, log *slog.Logger) (*badgerDisk, error) {
	created, err := claimDir(dir)
	if err != nil {
		return nil, err
	}
	lock, err := lockMarker(filepath.Join(dir, markerName))
	if err != nil {
		return nil, err
	}
	d := &badgerDisk{dir: dir, budget: budget, log: log, lock: lock, created: created, free: freeBytes}
	if err := wipeDir(dir); err != nil {
		d.unlock()
		return nil, err
	}
	return d, nil
}

// opened returns badger, or nil while nothing was written (so there is nothing to read or
// drop).
func (d *badgerDisk) opened() *badger.DB { return d.db.Load() }

// open returns badger, opening it at the first call. An error opening it is a failed write:
// the store keeps the pieces in memory, and the next write tries again.
func (d *badgerDisk) open() (*badger.DB, error) {
	if db := d.opened(); db != nil {
		return db, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if db := d.opened(); db != nil {
		return db, nil
	}
	if d.closed {
		return nil, fmt.Errorf("%w: %s", ErrClosed, d.dir)
	}
	if err := d.checkRoom(0); err != nil {
		return nil, fmt.Errorf("opening badger: %w", err)
	}
	db, err := badger.Open(badgerOptions(d.dir, d.budget, d.log))
	if err != nil {
		return nil, fmt.Errorf("opening badger in %s: %w", d.dir, err)
	}
	d.db.Store(db)
	return db, nil
}

// claimDir creates dir, or checks that an existing one is empty or a spill directory. It
// reports whether it created dir.
func claimDir(dir string) (bool, error) {
	names, err := readNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true, os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return false, err
	}
	if len(names) > 0 && !containsString(names, markerName) {
		return false, fmt.Errorf("%w: %q is not empty and holds no %s marker: refusing to wipe it",
			ErrConfig, dir, markerName)
	}
	return false, nil
}

// wipeDir removes everything in dir except the marker: spill data of an earlier process is
// never read back.
func wipeDir(dir string) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == markerName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// readNames lists the entries of dir.
func readNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// WriteBatch writes entries in badger WriteBatches of about badgerFlushBytes each.
// It first checks that the file system has room for them (see checkRoom): badger writes
// through memory mappings, where a full disk is SIGBUS, not an error.
func (d *badgerDisk) WriteBatch(entries []Entry) error {
	db, err := d.open()
	if err != nil {
		return err
	}
	if err := d.checkRoom(entriesBytes(entries)); err != nil {
		return err
	}
	wb := db.NewWriteBatch()
	pending := 0
	for _, e := range entries {
		if err := wb.Set(e.Key, e.Value); err != nil {
			wb.Cancel()
			return err
		}
		if pending += len(e.Key) + len(e.Value); pending >= badgerFlushBytes {
			if err := flush(wb); err != nil {
				return err
			}
			wb, pending = db.NewWriteBatch(), 0
		}
	}
	return flush(wb)
}

// entriesBytes is what entries take in badger's value log: keys, values and a header each.
func entriesBytes(entries []Entry) int64 {
	var n int64
	for _, e := range entries {
		n += int64(len(e.Key)+len(e.Value)) + 32
	}
	return n
}

// flush commits wb and waits for it, cancelling it on error.
func flush(wb *badger.WriteBatch) error {
	err := wb.Flush()
	if err != nil {
		wb.Cancel()
	}
	return err
}

// Scan iterates the keys under prefix in one read transaction, reading values lazily.
func (d *badgerDisk) Scan(prefix []byte, fn func(key, value []byte) error) error {
	db := d.opened()
	if db == nil {
		return nil
	}
	return db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			err := item.Value(func(v []byte) error { return fn(item.Key(), v) })
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// DropPrefix deletes a shuffle's keys. Their value-log space comes back when badger
// collects the value log or at DropAll.
func (d *badgerDisk) DropPrefix(prefix []byte) error {
	if db := d.opened(); db != nil {
		return db.DropPrefix(prefix)
	}
	return nil
}

// DropAll deletes everything, value-log files included. Badger requires that nothing reads
// meanwhile; the store guarantees it.
func (d *badgerDisk) DropAll() error {
	if db := d.opened(); db != nil {
		return db.DropAll()
	}
	return nil
}

// Close closes badger and deletes its files: spill data does not outlive the process.
func (d *badgerDisk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var err error
	if db := d.opened(); db != nil {
		err = db.Close()
	}
	if werr := wipeDir(d.dir); err == nil {
		err = werr
	}
	_ = os.Remove(d.lock.Name())
	d.unlock()
	if d.created {
		if rerr := os.RemoveAll(d.dir); err == nil {
			err = rerr
		}
	}
	return err
}

// unlock releases the marker file's lock.
func (d *badgerDisk) unlock() {
	_ = d.lock.Close()
}

// badgerLogger routes badger's logs into slog; badger's info lines are chatty, so they go to
// Debug.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any)   { l.emit(slog.LevelError, f, a) }
func (l badgerLogger) Warningf(f string, a ...any) { l.emit(slog.LevelWarn, f, a) }
func (l badgerLogger) Infof(f string, a ...any)    { l.emit(slog.LevelDebug, f, a) }
func (l badgerLogger) Debugf(f string, a ...any)   { l.emit(slog.LevelDebug, f, a) }

func (l badgerLogger) emit(level slog.Level, format string, args []any) {
	ctx := context.Background()
	if !l.log.Enabled(ctx, level) {
		return
	}
	l.log.Log(ctx, level, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
