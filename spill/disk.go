package spill

// Disk is the seam under the store: the badger implementation in production, fault-injecting
// wrappers in tests. Implementations must be safe for concurrent use: the store calls Scan for
// one shuffle while it writes or drops others.
type Disk interface {
	// WriteBatch stores entries (groups of pieces). It is all-or-nothing from the caller's
	// view: on error the store keeps the values in memory and returns the error; groups that
	// did reach the disk repeat keys that memory or later groups hold too, and Scan returns
	// each key once (from memory if it is there).
	// WriteBatch must not retain the slices after it returns.
	WriteBatch(entries []Entry) error
	// Scan calls fn for every entry whose key starts with prefix, in key order (bytewise).
	// key and value are valid during the call only. Scan stops at the first error from fn and
	// returns it.
	Scan(prefix []byte, fn func(key, value []byte) error) error
	// DropPrefix deletes every entry whose key starts with prefix. It may pause writes briefly:
	// the store calls it once per shuffle, never per piece.
	DropPrefix(prefix []byte) error
	// Close releases the disk. The store calls it once, from Store.Close.
	Close() error
}

// Entry is one key/value pair handed to Disk.WriteBatch.
type Entry struct {
	Key, Value []byte
}

// dropAller is implemented by disks that can cheaply drop everything (badger's DropAll also
// deletes the value log files that DropPrefix leaves for a later garbage collection). The store
// calls it instead of DropPrefix when no shuffle has data on disk any more and no scan runs.
type dropAller interface {
	DropAll() error
}
