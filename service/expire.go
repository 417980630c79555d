package service

import (
	"context"
	"fmt"
	"time"
)

// A shuffle that nobody puts to, reads from, waits on or sends shards for
// during Config.IdleExpiry is closed on this node: a client that died
// without closing it would otherwise hold its memory and spill files for
// ever (DESIGN §3.6). Each node decides for itself from its own clock
// (Config.Clock, which stamps the shuffles' activity too) and traffic; a
// shuffle in use touches every member within a few seconds (barrier
// polls, shard traffic, reads), so members expire it at about the same
// time. A later call names it as expired.

// expireIdle closes, every period, the shuffles idle for longer than
// Config.IdleExpiry, for as long as the service runs.
func (s *Service) expireIdle() {
	if s.cfg.IdleExpiry < 0 {
		return
	}
	period := min(max(s.cfg.IdleExpiry/4, 10*time.Millisecond), time.Minute)
	s.background(func(ctx context.Context) {
		t := s.cfg.Clock.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case now := <-t.C():
				s.expireAt(now)
			case <-ctx.Done():
				return
			}
		}
	})
}

// expireAt closes the shuffles idle at now for longer than IdleExpiry.
func (s *Service) expireAt(now time.Time) {
	for _, sh := range s.shuffles.All(func(sh *entry) bool { return sh.IdleFor(now) > s.cfg.IdleExpiry }) {
		id := sh.ID()
		s.log.Warn("shuffle expired", "shuffle", id, "idle", s.cfg.IdleExpiry)
		reason := fmt.Sprintf("expired after %s without activity on node %s", s.cfg.IdleExpiry, s.Name())
		if err := s.dropAs(id, reason, false); err != nil {
			s.log.Error("freeing an expired shuffle", "shuffle", id, "err", err)
		}
	}
}
