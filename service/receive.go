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
	c := control.Committed{Task: n.Key.Task, Attempt: n.Key.Attempt, Epoch: n.Epoch, Held: n.Held}
	if e, err := s.lookup(sh.ID()); err == nil {
		e.committed(c)
	}
	if s.commits.add(sh, c) {
		s.background(func(ctx context.Context) { s.sendCommits(ctx, sh) })
	}
}
