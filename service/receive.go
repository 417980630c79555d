package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// diskFailed asks the coordinator to fail shuffle st, whose data this
// node's spill disk failed to store (the receiver's Config.DiskFailed).
func (s *Service) diskFailed(st *shuffle.State, err error) {
	if sh, lerr := s.lookup(st.ID()); lerr == nil {
		s.abort(sh, err)
	}
}

// abort asks sh's coordinator, once, to fail the shuffle for err, which
// this node cannot get past (its spill disk is full): senders would
// otherwise retry their puts against it without end. The coordinator
// tells every member; the client's barrier and puts then fail with err,
// and closing the shuffle frees what it wrote.
func (s *Service) abort(sh *entry, err error) {
	if !sh.aborted.CompareAndSwap(false, true) {
		return
	}
	s.log.Error("shuffle cannot go on on this node: asking its coordinator to fail it", "shuffle", sh.ID(), "err", err)
	c := control.Msg{Op: control.OpAbort, Shuffle: sh.ID(), Node: s.Name(), Reason: err.Error()}
	s.background(func(ctx context.Context) {
		rerr := control.Retry(ctx, 8, func() error { _, err := s.request(ctx, sh.Coordinator(), c); return err })
		if rerr != nil {
			s.log.Error("asking the coordinator to fail the shuffle failed", "shuffle", sh.ID(), "err", rerr)
		}
	})
}

// abortFrom handles control.OpAbort on the coordinator: a member (c.Node)
// cannot go on with the shuffle.
func (s *Service) abortFrom(sh *entry, c *control.Msg) error {
	if !slices.Contains(sh.Members, c.Node) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s: abort from node %s, not one of its members", sh.ID(), c.Node))
	}
	co, err := s.coordOf(sh)
	if err != nil {
		return err
	}
	s.coord.Abort(co, fmt.Errorf("node %s cannot go on: %s", c.Node, c.Reason))
	return nil
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
