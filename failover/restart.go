package failover

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// TellRestarted tells coordinator co, in the background, that this node
// holds no state of shuffle id it can use (control.OpRestarted): it
// restarted, or it follows another line of epochs than co's
// (recovery.Decide).
func (s *Driver) TellRestarted(id, co string) {
	s.background(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, checkTimeout)
		defer cancel()
		_, err := s.request(ctx, co, control.Msg{Op: control.OpRestarted, Shuffle: id, Node: s.Name()})
		if err != nil {
			s.log.Warn("telling the coordinator this node restarted", "shuffle", id, "peer", co, "err", err)
		}
	})
}

// Restarted handles control.OpRestarted on sh's coordinator: member from
// restarted, or follows another line of epochs, and holds no state of sh
// this coordinator can use, so what it held is gone. It is
// declared lost (in the background, as a failure would be): a new epoch
// without it, and the replays of what it held. A member already lost, or
// one that names another node than itself, changes nothing.
func (s *Driver) Restarted(sh *Shuffle, c *control.Msg, from string) (control.Reply, error) {
	co, err := s.host.CoordOf(sh)
	if err != nil {
		return control.Reply{}, err
	}
	if c.Node != from {
		return control.Reply{}, shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("%w: shuffle %s: node %s says node %s restarted", shuffle.ErrBadInput, sh.ID(), from, c.Node))
	}
	if !slices.Contains(sh.Route().Live, from) {
		return control.Reply{}, nil
	}
	s.log.Warn("member holds no state of this line of epochs (it restarted, or followed the other side of a split): declaring it lost", "shuffle", sh.ID(), "peer", from)
	s.background(func(ctx context.Context) {
		sh.failover.Lock()
		defer sh.failover.Unlock()
		if slices.Contains(sh.Route().Live, from) {
			s.coord.Lose(ctx, co, from)
			s.publish(sh)
		}
	})
	return control.Reply{}, nil
}
