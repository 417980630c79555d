package service

import (
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shuffle"
)

// diskFailed asks the coordinator, once, to fail shuffle st, whose data
// this node's spill disk failed to store (the receiver's
// Config.DiskFailed; reports.Reporter.Abort).
func (s *Service) diskFailed(st *shuffle.State, err error) {
	if sh, lerr := s.lookup(st.ID()); lerr == nil && sh.aborted.CompareAndSwap(false, true) {
		s.reports.Abort(sh.ID(), sh.Coordinator(), err)
	}
}

// reportCommit reports a commit to the coordinator in the background (it is
// the receiver's Config.Committed).
func (s *Service) reportCommit(sh *shuffle.State, n receiver.Commit) {
	c := control.Committed{Task: n.Key.Task, Attempt: n.Key.Attempt, Epoch: n.Epoch, Held: n.Held}
	if n.Differs != nil {
		c.Differs = n.Differs.Detail(sh.ID(), n.Key, s.Name())
		s.log.Error("replayed task differs", "shuffle", sh.ID(), "task", n.Key.Task, "attempt", n.Key.Attempt, "partition", n.Differs.Partition, "first", n.Differs.First)
	}
	if n.Replaced != nil {
		s.log.Warn("replayed task differs: its rows replace the earlier attempt's", "shuffle", sh.ID(), "task", n.Key.Task, "attempt", n.Key.Attempt, "partition", n.Replaced.Partition, "first", n.Replaced.First)
	}
	if e, err := s.lookup(sh.ID()); err == nil {
		e.committed(c)
	}
	s.reports.Commit(sh, c)
}
