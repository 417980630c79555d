package service

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitter"
)

// Info is what one node knows of a shuffle.
type Info struct {
	Phase       Phase
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

// Info returns this node's view of shuffle id.
func (s *Service) Info(id string) (Info, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return Info{}, err
	}
	ph, ferr := sh.Status()
	in := Info{Phase: ph, Err: ferr, Coordinator: sh.Coordinator(), Members: sh.Members,
		Tasks: sh.Spec.Tasks, Partitions: sh.Spec.Partitions, Spec: sh.Spec, Reads: sh.recv.Reads()}
	if co := sh.coordPart(); co != nil {
		in.TasksDone = s.coord.TasksDone(co)
	}
	return in, nil
}

// Kind returns the kind of shuffle id (cheap: no lock on the shuffle).
func (s *Service) Kind(id string) (spec.Kind, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return "", err
	}
	return sh.Spec.Kind, nil
}

// Schema returns the Arrow schema of dataframe shuffle id.
func (s *Service) Schema(id string) (*arrow.Schema, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return nil, err
	}
	if sh.Schema == nil {
		return nil, fmt.Errorf("%w: shuffle %s is an array rechunk: it has no table schema", ErrBadInput, id)
	}
	return sh.Schema, nil
}

// Members are the live cluster members as this node sees them.
func (s *Service) Members() []member.Member { return s.net.Members() }

// Shuffles lists the IDs of the shuffles this node holds.
func (s *Service) Shuffles() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.shuffles))
	for id := range s.shuffles {
		ids = append(ids, id)
	}
	return ids
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
	// next ones (Config.KeepRegions).
	PooledBytes int64
	// MappedBytes is the arena memory the node holds mapped, PooledBytes
	// included (offheap.Pool.Mapped).
	MappedBytes int64
	// OpMemory is what the running node-side ops reserved (ReserveOp) of
	// OpMemoryLimit, and OpsWaiting how many ops wait for room.
	OpMemory, OpMemoryLimit int64
	OpsWaiting              int
}

// Stats returns a snapshot of the node's counters.
func (s *Service) Stats() Stats {
	s.mu.RLock()
	n := len(s.shuffles)
	s.mu.RUnlock()
	st := Stats{Node: s.Name(), Shuffles: n, Send: s.split.Stats(), Store: s.store.Stats(), PooledBytes: s.regions.Bytes(), MappedBytes: s.regions.Mapped(),
		OpMemory: s.ops.Used(), OpMemoryLimit: s.ops.Size(), OpsWaiting: s.ops.Waiting()}
	st.Takeovers, st.LastTakeover, st.LastTakeoverTook = s.fo.Takeovers()
	return st
}
