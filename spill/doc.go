// Package spill is the receivers' shard store (docs/design.md §3.3 and §8): pieces of many
// shuffles, held in memory up to a node-wide budget and spilled to badger on disk beyond it.
//
// The store is generic. A piece is a Value: an opaque object that reports its size, can
// serialise itself when it must go to disk, and is released when the store is done with it.
// Pieces are keyed by shuffle ID and Key (partition, task, attempt, seq); Scan returns the
// pieces of one partition in Key order, each either as the in-memory Value or as the bytes
// MarshalSpill produced, so the caller decodes spilled pieces itself.
//
// # Memory and disk
//
// Values in memory are charged Value.Size bytes against Config.MemoryLimit. A Put that takes
// memory over the budget spills, before it returns, the oldest pieces of any shuffle (FIFO)
// in batches of at least Config.SpillChunk bytes: back-pressure on the caller. Pieces of
// Puts in progress and of partitions being scanned are not spillable, so memory can exceed
// the budget by those. The budget counts Value.Size only: callers charge the piece index
// (about 90 bytes a piece in memory) in it. What comes on top is Config.Overhead: badger's
// memtables and caches, scaled to the budget (a sixteenth of it each, 1 to 16 MiB), and the
// spill batch being written; plus 16 bytes per piece for duplicate detection, which stays
// until the shuffle is dropped. Without a disk (Config.Dir and Config.Disk empty) a Put that
// does not fit fails with ErrMemoryFull.
//
// A spill writes one disk entry per group: the batch's pieces of one (shuffle, partition) in
// Key order, up to about 1 MiB. Its key is the shuffle ID prefixed with its 2-byte big-endian
// length, followed by the first piece's partition, task, attempt and seq in big endian, so a
// shuffle or a partition is a key prefix; its value holds each piece's task, attempt, seq and
// length, then its bytes. Groups of different spills may overlap in key range: Scan merges
// them (holding in memory the groups whose ranges overlap the keys it is at) with the
// partition's pieces in memory. DropShuffle is one badger DropPrefix (or DropAll when no
// other shuffle has data on disk, which also frees the value-log files). Badger memory-maps
// its value log, so spilled bytes show in the process's RSS as file-backed pages (page cache
// that the kernel can reclaim) until the shuffle is dropped.
//
// Spill data does not survive a restart: Open wipes Config.Dir (refusing a non-empty
// directory it did not mark as its own, or one another store holds) and Close deletes it.
// There is no crash recovery. Badger itself opens at the first spill: a store that never
// spills never pays for its memtables, caches and goroutines; a failure to open it is a
// failed spill, like any write error below.
//
// # Errors
//
// Badger writes its value log and tables through memory mappings, where a full disk would be
// SIGBUS, not an error: before opening badger and before each spill, the store checks with
// statfs that the file system has room for the spill's bytes plus a margin for what badger
// writes on its own (four memtables' worth and 8 MiB), and fails the spill with ENOSPC
// otherwise. The check cannot see another process filling the disk between it and the write:
// give the spill directory a file system of its own.
//
// A failed spill (disk full, any write error) fails the Put that needed the room with an
// error wrapping ErrDisk and the cause (for example syscall.ENOSPC), naming the shuffle and
// node. The pieces that failed to spill stay in memory, in the queue, and a later spill
// retries them; the failed Put did not take its value (the caller still owns it), so memory
// stays within budget (give or take the last piece put) and nothing is lost silently. Puts that fit in memory keep working, and
// so do other shuffles once room is freed (for example by dropping the failing shuffle).
//
// # Caller's duties
//
//   - Give each store its own Dir, and Close it.
//   - After a successful Put, stop using the value: the store owns it. After a failed Put,
//     the caller still owns it and must release it.
//   - Use a Value passed to a Scan callback, and the disk bytes, only during the call.
//   - Scan a shuffle after its barrier: Puts to a shuffle during its Scan may or may not be
//     seen. Drop a shuffle once its outputs are served.
//
// # Concurrency
//
// Every method is safe for concurrent use. Puts to any shuffles run in parallel except while
// one of them spills: spills are serialised, and a Put that needs room waits for the running
// spill. Scan runs concurrently with Puts to other shuffles (their spills skip the pieces it
// holds) and with DropShuffle (the partition's values are released when the Scan ends).
// Close waits for Puts and Scans in progress.
package spill
