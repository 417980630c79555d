package service

import (
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/status"
)

// Info is what one node knows of a shuffle, and Stats a snapshot of one
// node's shuffle engine (package status).
type (
	Info  = status.Info
	Stats = status.Stats
)

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

// Members are the live cluster members as this node sees them.
func (s *Service) Members() []member.Member { return s.net.Members() }

// Shuffles lists the IDs of the shuffles this node holds.
func (s *Service) Shuffles() []string {
	return s.shuffles.IDs()
}

// Stats returns a snapshot of the node's counters.
func (s *Service) Stats() Stats {
	n := s.shuffles.Len()
	st := Stats{Node: s.Name(), Shuffles: n, Send: s.split.Stats(), Store: s.store.Stats(), PooledBytes: s.regions.Bytes(), MappedBytes: s.regions.Mapped(),
		OpMemory: s.ops.Budget.Used(), OpMemoryLimit: s.ops.Budget.Size(), OpsWaiting: s.ops.Budget.Waiting()}
	st.Takeovers, st.LastTakeover, st.LastTakeoverTook = s.fo.Takeovers()
	return st
}
