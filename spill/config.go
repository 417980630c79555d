package spill

import (
	"fmt"
	"log/slog"
)

const (
	// DefaultMemoryLimit is the memory budget of a zero Config.
	DefaultMemoryLimit = 1 << 30
	// DefaultSpillChunk is the spill batch size of a zero Config with a budget of at least
	// 4*DefaultSpillChunk; smaller budgets spill a quarter of the budget at a time.
	DefaultSpillChunk = 8 << 20
	// DefaultNode names the node in errors when Config.Node is empty.
	DefaultNode = "local"
)

// Config configures a Store. The zero value is usable: every zero field means its default.
type Config struct {
	// Dir is the badger directory (created). "" = memory only (no spilling: Put over budget
	// returns ErrMemoryFull). Spill data does not survive a restart: Open wipes Dir, and Close
	// deletes what it wrote. Open refuses a non-empty Dir that it did not create as a spill
	// directory (it holds a marker file), and two stores cannot share one Dir.
	Dir string
	// MemoryLimit is the budget, in Value.Size bytes, for values held in memory (default
	// DefaultMemoryLimit). Over it, Put spills the oldest values of ANY shuffle (FIFO) to disk
	// in one WriteBatch of at least SpillChunk bytes.
	MemoryLimit int64
	// SpillChunk is the minimum size of one spill batch. Zero means min(DefaultSpillChunk,
	// MemoryLimit/4) (at least 1): large enough that badger writes at full speed, small enough
	// that one spill never evicts most of a small budget. The badger disk flushes its
	// WriteBatch every 64 MiB, so chunks above that do not speed up writing.
	SpillChunk int64
	// Node is the node name used in errors and logs (default DefaultNode).
	Node string
	// Logger receives the store's logs and badger's (badger's info and debug lines at
	// Debug level). Nil discards them.
	Logger *slog.Logger
	// Disk is an optional seam for tests; nil = badger at Dir. When set, Dir is ignored.
	Disk Disk
}

// DefaultConfig returns a memory-only Config with every default filled in. Set Dir to spill.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

// Validate reports a configuration that Open would reject. Zero fields are valid (defaults).
func (c Config) Validate() error {
	if c.MemoryLimit < 0 {
		return fmt.Errorf("%w: MemoryLimit %d is negative", ErrConfig, c.MemoryLimit)
	}
	if c.SpillChunk < 0 {
		return fmt.Errorf("%w: SpillChunk %d is negative", ErrConfig, c.SpillChunk)
	}
	return nil
}

// Overhead estimates the Go heap a store with this configuration uses beyond MemoryLimit, at
// most: badger's memtables, table builders and caches, which scale with MemoryLimit (from
// ~11 MiB at budgets of 16 MiB and less to ~56 MiB at 256 MiB and more), and a spill batch
// being marshalled into groups (twice SpillChunk). The piece index is not counted: callers
// charge it in Value.Size. A memory-only store has no overhead.
func (c Config) Overhead() int64 {
	c = c.withDefaults()
	if c.Dir == "" && c.Disk == nil {
		return 0
	}
	disk := int64(0)
	if c.Disk == nil {
		disk = 3*badgerScale(c.MemoryLimit) + 8<<20
	}
	return disk + 2*c.SpillChunk
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.MemoryLimit == 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.SpillChunk == 0 {
		c.SpillChunk = max(1, min(DefaultSpillChunk, c.MemoryLimit/4))
	}
	if c.Node == "" {
		c.Node = DefaultNode
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
