package service

import (
	"context"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// receive hands a shards message to the receiver; kept reports whether it
// still references the message's bytes (see receiver.ReceiveKept).
func (s *Service) receive(ctx context.Context, m *shard.Msg) (kept bool, err error) {
	sh, err := s.lookup(m.Shuffle)
	if err != nil {
		return true, shuffle.Refuse(wire.RefuseUnknownShuffle, err)
	}
	return s.recv.ReceiveKept(ctx, sh.recv, m)
}

// reportCommit reports a commit to the coordinator in the background (it is
// the receiver's Config.Committed).
func (s *Service) reportCommit(sh *shuffle.State, n receiver.Commit) {
	held := n.Held
	c := control.Msg{Op: control.OpCommitted, Shuffle: sh.ID(), Epoch: n.Epoch, Node: s.Name(), Task: n.Key.Task, Attempt: n.Key.Attempt, Held: &held}
	if n.Differs != nil {
		c.Differs = n.Differs.Detail(sh.ID(), n.Key, s.Name())
		s.log.Error("replayed task differs", "shuffle", sh.ID(), "task", n.Key.Task, "attempt", n.Key.Attempt, "partition", n.Differs.Partition, "first", n.Differs.First)
	}
	if e, err := s.lookup(sh.ID()); err == nil {
		e.committed(control.Committed{Task: n.Key.Task, Attempt: n.Key.Attempt, Epoch: n.Epoch, Held: held})
	}
	s.background(func(ctx context.Context) {
		err := control.Retry(ctx, 8, func() error { _, err := s.request(ctx, sh.Coordinator(), c); return err })
		if err != nil {
			s.log.Error("reporting commit failed", "shuffle", sh.ID(), "task", n.Key.Task, "attempt", n.Key.Attempt, "err", err)
		}
	})
}
