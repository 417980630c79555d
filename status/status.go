package status

import (
	"time"

	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitter"
)

// Info is what one node knows of a shuffle.
type Info struct {
	Phase       shuffle.Phase
	Err         error
	Coordinator string
	Members     []string
	Tasks       int
	Partitions  int
	// TasksDone is known on the coordinator only.
	TasksDone int
	// Reads is what reads of this node's output partitions handed out
	// (bytes out): DoGets, peers' fetches and node-side ops.
	Reads receiver.ReadStats
	// Spec is the shuffle's spec (do not modify).
	Spec *spec.Spec
}

// Stats is a snapshot of one node's shuffle engine.
type Stats struct {
	Node     string
	Shuffles int
	Send     splitter.Stats
	Store    spill.Stats
	// Takeovers is how many shuffles this node took over as a successor
	// coordinator; LastTakeover is when the last one finished rebuilding
	// (zero if none) and LastTakeoverTook how long it took from its start.
	Takeovers        int64
	LastTakeover     time.Time
	LastTakeoverTook time.Duration
	// PooledBytes is the arena memory of freed shuffles kept mapped for the
	// next ones (service.Config.KeepRegions).
	PooledBytes int64
	// MappedBytes is the arena memory the node holds mapped, PooledBytes
	// included (offheap.Pool.Mapped).
	MappedBytes int64
	// OpMemory is what the running node-side ops reserved (ReserveOp) of
	// OpMemoryLimit, and OpsWaiting how many ops wait for room
	// (limits.Ops).
	OpMemory, OpMemoryLimit int64
	OpsWaiting              int
}
