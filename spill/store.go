package spill

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
)

// Value is a piece held in memory. The store owns it after a successful Put until it calls
// Release (after spilling it, or when the shuffle is dropped or the store closed) or hands it
// to a Scan callback (still owned by the store; valid during the callback only).
type Value interface {
	// Size is the number of bytes charged against the memory budget. It must not change
	// while the store holds the value.
	Size() int64
	// MarshalSpill returns the bytes written to disk when the value is spilled. The store does
	// not modify them and is done with them before it calls Release, so they may alias the
	// value's own buffers. The store calls it from the goroutine of the Put that spills.
	MarshalSpill() ([]byte, error)
	// Release frees the value. The store calls it exactly once.
	Release()
}

// SpillAppender is an optional interface of a Value: AppendSpill appends to dst the bytes
// MarshalSpill would return, and returns the extended slice. The store uses it, when a value
// has it, to write a piece straight into its group without a buffer of its own. The same
// rules as for MarshalSpill apply.
type SpillAppender interface {
	AppendSpill(dst []byte) ([]byte, error)
}

// Store holds the pieces of many shuffles: in memory up to Config.MemoryLimit, beyond it on
// disk. See the package documentation for the concurrency rules.
type Store struct {
	cfg  Config
	disk Disk // nil: memory only
	log  *slog.Logger

	// spillMu serialises spills, drops and scan snapshots. It is taken before mu and held
	// across disk writes; mu is never held across I/O.
	spillMu sync.Mutex

	mu        sync.Mutex
	closed    bool
	shuffles  map[string]*shuffleState
	queue     fifo  // pieces in memory that a spill may take, oldest first
	diskScans int   // scans reading the disk: DropAll must wait for them
	totals    Stats // MemoryBytes is what the budget is checked against
	reserved  int64 // bytes of every shuffle's Reserve and Charge (part of totals.MemoryBytes)

	ops       sync.WaitGroup // Puts and Scans in progress; Close waits for them
	closeOnce sync.Once
	closeErr  error
}

// Open creates a store. With Config.Dir set it wipes Dir and opens badger there; with
// Config.Disk set it uses that disk; with neither the store is memory only.
func Open(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Store{
		cfg:      cfg,
		disk:     cfg.Disk,
		log:      cfg.Logger.With("component", "spill", "node", cfg.Node),
		shuffles: map[string]*shuffleState{},
	}
	s.totals.MemoryLimit = cfg.MemoryLimit
	if s.disk == nil && cfg.Dir != "" {
		d, err := openBadger(cfg.Dir, cfg.MemoryLimit, s.log)
		if err != nil {
			return nil, fmt.Errorf("spill: node %q: opening %q: %w", cfg.Node, cfg.Dir, err)
		}
		s.disk = d
	}
	return s, nil
}

// Put stores v under (shuffle, k). It is safe for concurrent use. When memory is over budget
// it spills the oldest pieces of any shuffle to disk before it returns (back-pressure on the
// caller); only then does the new piece join the spill queue, and it is spilled at once if it
// alone still takes memory over budget.
//
// On success the store owns v. On any error the store did not take v: the caller still owns
// it. Errors: ErrDuplicate (the key is already stored), ErrMemoryFull (memory-only store over
// budget), ErrDisk or ErrMarshal (the spill that would make room failed; the pieces it tried
// to spill stay in memory, nothing is lost, and the store stays usable), ErrInvalid, ErrClosed.
// All name the shuffle and node.
func (s *Store) Put(shuffle string, k Key, v Value) error {
	dup := false
	if err := s.PutMany(shuffle, []Item{{Key: k, Value: v}}, func(int) { dup = true }); err != nil {
		return err
	}
	if dup {
		return s.errorf(shuffle, ErrDuplicate, "%v", k)
	}
	return nil
}

// overBudget reports whether a spill is needed and possible. Caller holds mu.
func (s *Store) overBudget() bool {
	return s.disk != nil && s.totals.MemoryBytes > s.cfg.MemoryLimit
}

// checkPut validates the arguments of Put and returns the value's size.
func checkPut(shuffle string, v Value) (int64, error) {
	if err := checkShuffleID(shuffle); err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("%w: nil value", ErrInvalid)
	}
	size := v.Size()
	if size < 0 {
		return 0, fmt.Errorf("%w: negative size %d", ErrInvalid, size)
	}
	return size, nil
}

// account adds bytes and pieces to the memory counters of the store and of sh.
func (s *Store) account(sh *shuffleState, bytes, pieces int64) {
	s.totals.MemoryBytes += bytes
	s.totals.MemoryPieces += pieces
	sh.stats.MemoryBytes += bytes
	sh.stats.MemoryPieces += pieces
}

// Scan calls fn for every piece of (shuffle, partition) in Key order, merging memory and disk.
// Exactly one of mem and disk is non-nil: mem is owned by the store and valid during the call
// only; disk holds the bytes MarshalSpill returned (non-nil even when empty), valid during the
// call only. Scan stops at
// the first error from fn and returns it unwrapped; disk failures wrap ErrDisk.
//
// Scan may run concurrently with Puts to other shuffles (which may spill: the partition's
// in-memory pieces are pinned until Scan returns) and with DropShuffle of this shuffle (its
// values are released after Scan returns). Puts to the same shuffle during Scan are not
// guaranteed to be seen: scan a shuffle after its barrier. An unknown shuffle or empty
// partition yields no calls.
func (s *Store) Scan(shuffle string, partition uint32, fn func(k Key, mem Value, disk []byte) error) error {
	pi, mem, useDisk, err := s.pin(shuffle, partition)
	if err != nil {
		return err
	}
	defer s.unpin(pi, useDisk)
	m := merger{mem: mem, fn: fn, prefixLen: len(shufflePrefix(shuffle))}
	if useDisk {
		err := s.disk.Scan(partitionPrefix(shuffle, partition), m.onDisk)
		if m.fnErr != nil {
			return m.fnErr
		}
		if err != nil {
			return s.errorf(shuffle, ErrDisk, "scanning partition %d: %w", partition, err)
		}
	}
	return m.finish()
}

// pin snapshots the in-memory pieces of a partition and pins them against spilling. It waits
// for a running spill so that no piece is in flight between memory and disk. On success the
// caller must call unpin.
func (s *Store) pin(shuffle string, partition uint32) (*partIndex, []*piece, bool, error) {
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, false, s.errorf(shuffle, ErrClosed, "scan partition %d", partition)
	}
	s.ops.Add(1)
	sh := s.shuffles[shuffle]
	if sh == nil || sh.parts[partition] == nil {
		return nil, nil, false, nil
	}
	pi := sh.parts[partition]
	pi.pins++
	useDisk := s.disk != nil && pi.onDisk > 0
	if useDisk {
		s.diskScans++
	}
	return pi, pi.snapshot(), useDisk, nil
}

// unpin ends a scan begun by pin, releasing the partition if its shuffle was dropped meanwhile.
func (s *Store) unpin(pi *partIndex, useDisk bool) {
	defer s.ops.Done()
	if pi == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pi.pins--
	if useDisk {
		s.diskScans--
	}
	if pi.pins == 0 && pi.sh.dropped {
		s.releasePart(pi)
	}
}

// Partitions returns the partitions of shuffle that hold at least one piece, sorted.
func (s *Store) Partitions(shuffle string) []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh := s.shuffles[shuffle]
	if sh == nil {
		return nil
	}
	var ps []uint32
	for id, pi := range sh.parts {
		if pi.live+pi.onDisk > 0 {
			ps = append(ps, id)
		}
	}
	slices.Sort(ps)
	return ps
}

// PartitionBytes returns the bytes of the pieces of (shuffle, partition),
// in memory or spilled, as they were put (their sizes in memory): about
// what reading the partition back takes. An unknown shuffle or partition
// has none.
func (s *Store) PartitionBytes(shuffle string, partition uint32) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sh := s.shuffles[shuffle]; sh != nil && sh.parts[partition] != nil {
		return sh.parts[partition].bytes
	}
	return 0
}

// DropShuffle frees the memory values (Release) and disk data (badger DropPrefix) of shuffle.
// Other shuffles are unaffected. Values of partitions being scanned are released when their
// scan ends. A later Put with the same ID starts a new, empty shuffle; after a DropShuffle
// that failed (ErrDisk), do not reuse the ID, as its old data may still be on disk. Dropping
// an unknown shuffle is not an error. It waits for a running spill.
func (s *Store) DropShuffle(shuffle string) error {
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	touched, all, err := s.forget(shuffle)
	if err != nil || !touched {
		return err
	}
	if err := s.dropDisk(shuffle, all); err != nil {
		return s.errorf(shuffle, ErrDisk, "dropping spilled data: %w", err)
	}
	s.log.Debug("dropped shuffle from disk", "shuffle", shuffle, "all", all)
	return nil
}

// forget removes shuffle from the index and releases its unpinned values. touched reports
// whether the disk may hold its keys; all whether the disk holds nothing else and no scan
// reads it.
func (s *Store) forget(shuffle string) (touched, all bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, false, s.errorf(shuffle, ErrClosed, "drop")
	}
	sh := s.shuffles[shuffle]
	if sh == nil {
		return false, false, nil
	}
	delete(s.shuffles, shuffle)
	sh.dropped = true
	s.account(sh, -sh.reserved, 0)
	s.reserved -= sh.reserved
	sh.reserved = 0
	for _, pi := range sh.parts {
		for _, p := range pi.mem {
			s.queue.remove(p)
		}
		if pi.pins == 0 {
			s.releasePart(pi)
		}
	}
	return sh.touched, s.diskIdle(), nil
}

// diskIdle reports whether no live shuffle may have keys on disk and no scan reads it.
func (s *Store) diskIdle() bool {
	if s.diskScans > 0 {
		return false
	}
	for _, sh := range s.shuffles {
		if sh.touched {
			return false
		}
	}
	return true
}

// dropDisk deletes a dropped shuffle's keys; all means the whole disk may be wiped.
func (s *Store) dropDisk(shuffle string, all bool) error {
	if da, ok := s.disk.(dropAller); ok && all {
		return da.DropAll()
	}
	return s.disk.DropPrefix(shufflePrefix(shuffle))
}

// releasePart releases the in-memory values of pi and uncharges them.
func (s *Store) releasePart(pi *partIndex) {
	bytes, pieces := pi.release()
	s.account(pi.sh, -bytes, -pieces)
}

// Close releases every value held in memory and closes the disk (badger deletes its files).
// It waits for Puts and Scans in progress. It is idempotent; later calls return the first
// call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Store) close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.ops.Wait()
	s.spillMu.Lock()
	defer s.spillMu.Unlock()
	s.mu.Lock()
	for _, sh := range s.shuffles {
		for _, pi := range sh.parts {
			s.releasePart(pi)
		}
	}
	s.shuffles, s.queue = map[string]*shuffleState{}, fifo{}
	s.mu.Unlock()
	if s.disk == nil {
		return nil
	}
	if err := s.disk.Close(); err != nil {
		return fmt.Errorf("%w: node %q: closing: %w", ErrDisk, s.cfg.Node, err)
	}
	return nil
}

// errorf wraps sentinel with the shuffle and node and a formatted detail.
func (s *Store) errorf(shuffle string, sentinel error, format string, args ...any) error {
	args = append([]any{sentinel, shuffle, s.cfg.Node}, args...)
	return fmt.Errorf("%w: shuffle %q on node %q: "+format, args...)
}
