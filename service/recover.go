package service

import (
	"context"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/member"
)

// watch follows membership events for as long as the service runs: a
// member that fails or leaves is lost to every shuffle it belongs to.
func (s *Service) watch(events <-chan member.Event, stop func()) {
	s.background(func(ctx context.Context) {
		defer stop()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					return
				}
				if e.Kind == member.Failed || e.Kind == member.Left {
					s.memberLost(ctx, e.Member.Name)
				}
			case <-ctx.Done():
				return
			}
		}
	})
}

// memberLost handles the loss of node in every open shuffle: shuffles it
// coordinated fail (there is no coordinator failover yet); shuffles this
// node coordinates move to a new epoch without it.
func (s *Service) memberLost(ctx context.Context, node string) {
	s.log.Warn("member lost", "peer", node)
	s.mu.RLock()
	shuffles := make([]*entry, 0, len(s.shuffles))
	for _, sh := range s.shuffles {
		shuffles = append(shuffles, sh)
	}
	s.mu.RUnlock()
	for _, sh := range shuffles {
		switch {
		case sh.Coordinator == node:
			err := fmt.Errorf("coordinator %s was lost (coordinator failover is not implemented: run the shuffle again)", node)
			sh.Finish(Failed, err)
			s.split.Forget(sh.ID())
		case sh.coord != nil && slices.Contains(sh.Route().Live, node):
			s.coord.Lose(ctx, sh.coord, node)
		}
	}
}
