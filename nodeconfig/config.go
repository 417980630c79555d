package nodeconfig

import (
	"cmp"
	"errors"
	"log/slog"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/spill"
)

// Config configures a node's shuffle engine (service.Config). The zero value of a field means its default.
type Config struct {
	// MemoryLimit is the node's budget for shard data: a quarter goes to
	// send buffers, the rest to the in-memory part of the spill store.
	// Received pieces are charged their bytes plus ~160 bytes of
	// bookkeeping each. MemoryOverhead estimates what the node needs on
	// top. Default 1 GiB.
	MemoryLimit int64
	// OpMemory is the node's budget for node-side ops (joins and sorts of
	// output partitions, service.ReserveOp), on top of MemoryLimit: an op reserves
	// what it will hold of its input partitions (OpInput.Copies) before it
	// reads them, and waits while the ops running hold the budget. Default
	// half of MemoryLimit.
	OpMemory int64
	// SpillDir is where the spill store keeps badger files. Empty means
	// memory only: over budget, receiving fails.
	SpillDir string
	// BufferBytes is the size at which a send buffer is sent (default 4 MiB).
	BufferBytes int64
	// MaxInFlight is the number of messages in flight per peer and shuffle
	// (default 2).
	MaxInFlight int
	// OutputBatchRows is the number of rows service.Get aims for in one output
	// batch (default 65536).
	OutputBatchRows int64
	// LossWait is how long the coordinator waits for the failure detector
	// when a member does not take the seal, before failing the shuffle
	// (default 30 s).
	LossWait time.Duration
	// IdleExpiry closes a shuffle on this node once nobody put to it, read
	// from it, waited at its barrier or sent it shards for this long (its
	// client died without closing it). Default 1 hour; negative: never.
	IdleExpiry time.Duration
	// Recheck is how often this node asks the coordinators of the
	// shuffles it holds whether it is still in them (package failover), on top
	// of asking when members come back; a shuffle younger than this is not
	// asked about. Default 10 s.
	Recheck time.Duration
	// KeepRegions is how long the node keeps the memory of a freed
	// shuffle's arenas (received partitions and chunks, outside the Go
	// heap) mapped for the next shuffles, up to the store's part of
	// MemoryLimit: reusing it costs a clear, fresh pages cost a page fault
	// each (far more under a hypervisor). Default 30 s; negative: never.
	KeepRegions time.Duration
	// MaxShuffles caps the shuffles this node holds at once (as
	// coordinator or member); a create past it is refused with limits.ErrLimit.
	// Default DefaultMaxShuffles.
	MaxShuffles int
	// MaxTasks and MaxPartitions cap the input tasks and output
	// partitions of one spec (each costs memory on the coordinator and on
	// every member from create on); a create past them is refused with
	// ErrLimit. Defaults DefaultMaxTasks and DefaultMaxPartitions; at most
	// spec.MaxTasks and spec.MaxPartitions.
	MaxTasks int
	// MaxPartitions: see MaxTasks.
	MaxPartitions int
	// MaxRuns caps the runs an array spec's distributed axes plan into
	// (spec.Spec.Runs: a cyclic axis has one per block, whatever the size
	// of its spec); checked before planning, a create past it is refused
	// with ErrLimit. Default DefaultMaxRuns; at most spec.MaxRuns.
	MaxRuns int64
	// Allocator for Arrow data; default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Clock times what the node decides by the clock: idle expiry (and
	// the shuffles' activity it measures), the rejoin checks, the waits of
	// failure handling, and LossWait on the coordinator and in barrier
	// waits. Default the wall clock; tests give a clock.Fake.
	Clock clock.Clock
}

// Default limits on what clients may ask of a node (Config.MaxShuffles,
// MaxTasks, MaxPartitions). A task costs ~120 bytes of tracker on the
// coordinator, a partition ~100 bytes of ledger on every member: the
// defaults keep one spec under ~125 MB and ~25 MB.
const (
	DefaultMaxShuffles   = 1024
	DefaultMaxTasks      = 1 << 20
	DefaultMaxPartitions = 1 << 18
	// DefaultMaxRuns keeps one array plan under ~60 MB allocated (~35 MB
	// kept) and ~0.1 s of CPU on each member.
	DefaultMaxRuns = 1 << 18
)

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		MemoryLimit: 1 << 30, BufferBytes: 4 << 20, MaxInFlight: 2,
		OutputBatchRows: 1 << 16, LossWait: 30 * time.Second, IdleExpiry: time.Hour, Recheck: 10 * time.Second, KeepRegions: 30 * time.Second,
		MaxShuffles: DefaultMaxShuffles, MaxTasks: DefaultMaxTasks, MaxPartitions: DefaultMaxPartitions, MaxRuns: DefaultMaxRuns, Allocator: memory.DefaultAllocator, Logger: slog.Default(),
		Clock: clock.Real{},
	}
}

// WithDefaults returns c with each zero field set to its default.
func (c Config) WithDefaults() Config {
	d := Default()
	if c.MemoryLimit == 0 {
		c.MemoryLimit = d.MemoryLimit
	}
	c.OpMemory = cmp.Or(c.OpMemory, max(c.MemoryLimit/2, 1))
	if c.BufferBytes == 0 {
		c.BufferBytes = d.BufferBytes
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = d.MaxInFlight
	}
	if c.OutputBatchRows == 0 {
		c.OutputBatchRows = d.OutputBatchRows
	}
	if c.LossWait == 0 {
		c.LossWait = d.LossWait
	}
	if c.IdleExpiry == 0 {
		c.IdleExpiry = d.IdleExpiry
	}
	c.Recheck = cmp.Or(c.Recheck, d.Recheck)
	c.KeepRegions = cmp.Or(c.KeepRegions, d.KeepRegions)
	c.MaxShuffles = cmp.Or(c.MaxShuffles, d.MaxShuffles)
	c.MaxTasks = cmp.Or(c.MaxTasks, d.MaxTasks)
	c.MaxPartitions = cmp.Or(c.MaxPartitions, d.MaxPartitions)
	c.MaxRuns = cmp.Or(c.MaxRuns, d.MaxRuns)
	if c.Allocator == nil {
		c.Allocator = d.Allocator
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	c.Clock = clock.Or(c.Clock)
	return c
}

// Memory is how MemoryLimit is split (package limits).
func (c Config) Memory() limits.Memory {
	return limits.Memory{Limit: c.MemoryLimit, BufferBytes: c.BufferBytes}
}

// KeptRegions is the most arena memory of freed shuffles the node keeps
// mapped: the store's budget, none unless KeepRegions is positive.
func (c Config) KeptRegions() int64 {
	if c.KeepRegions <= 0 {
		return 0
	}
	return c.Memory().Store()
}

// OpBudget is the node-side ops' memory budget, OpMemory with its default.
func (c Config) OpBudget() int64 { return c.WithDefaults().OpMemory }

// MemoryOverhead estimates the Go heap the service needs beyond MemoryLimit, at most: the
// spill store's overhead (badger's memtables and caches, scaled to the store's budget, and a
// spill batch being written; spill.Config.Overhead), the shard messages being received
// (InboundBytes), the input batches of puts being cut (InputBytes) and the output batches of
// reads being sent (OutputBytes). The Go runtime, RPC buffers and batches of reads in progress come on top.
func (c Config) MemoryOverhead() int64 {
	c = c.WithDefaults()
	return spill.Config{Dir: c.SpillDir, MemoryLimit: c.Memory().Store()}.Overhead() + c.InboundBytes() + c.InputBytes() + c.OutputBytes()
}

// InputBytes is what the input batches of the puts in progress on this
// node may hold at once (limits.Memory.Input).
func (c Config) InputBytes() int64 { return c.WithDefaults().Memory().Input() }

// InboundBytes is what the node should allow the shard messages it is
// receiving to hold at once (dht.Config.MaxInboundBytes;
// limits.Memory.Inbound).
func (c Config) InboundBytes() int64 { return c.WithDefaults().Memory().Inbound() }

// OutputBytes is what the output batches of the reads in progress on this
// node may hold at once (limits.Memory.Output).
func (c Config) OutputBytes() int64 { return c.WithDefaults().Memory().Output() }

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.MemoryLimit < 0 || c.OpMemory < 0 || c.BufferBytes < 0 || c.MaxInFlight < 0 || c.OutputBatchRows < 0 {
		return errors.New("service: negative size in config")
	}
	if c.MaxShuffles < 0 || c.MaxTasks < 0 || c.MaxPartitions < 0 || c.MaxRuns < 0 {
		return errors.New("service: negative MaxShuffles, MaxTasks, MaxPartitions or MaxRuns in config")
	}
	if c.Recheck < 0 {
		return errors.New("service: negative Recheck in config")
	}
	return nil
}
