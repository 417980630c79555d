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
	s.mu.RLock()
	var idle []string
	for id, sh := range s.shuffles {
		if sh.IdleFor(now) > s.cfg.IdleExpiry {
			idle = append(idle, id)
		}
	}
	s.mu.RUnlock()
	for _, id := range idle {
		s.log.Warn("shuffle expired", "shuffle", id, "idle", s.cfg.IdleExpiry)
		reason := fmt.Sprintf("expired after %s without activity on node %s", s.cfg.IdleExpiry, s.Name())
		if err := s.dropAs(id, reason, false); err != nil {
			s.log.Error("freeing an expired shuffle", "shuffle", id, "err", err)
		}
	}
}

// maxTombstones bounds how many dropped shuffles a node remembers.
const maxTombstones = 1024

// tombstones remember why the most recently dropped shuffles are gone, so
// that a late call gets "closed" or "expired" rather than only "unknown".
// Not safe for concurrent use: Service.mu guards it.
type tombstones struct {
	reason map[string]string
	left   map[string]bool // shuffles that went on without this node
	order  []string        // oldest first
}

func (t *tombstones) add(id, reason string) {
	if t.reason == nil {
		t.reason = map[string]string{}
	}
	if _, ok := t.reason[id]; !ok {
		t.order = append(t.order, id)
	}
	t.reason[id] = reason
	if len(t.order) > maxTombstones {
		delete(t.reason, t.order[0])
		delete(t.left, t.order[0])
		t.order = t.order[1:]
	}
}

// addLeft is add for a shuffle that goes on without this node (an epoch
// move declared it lost): a call about it belongs to another node.
func (t *tombstones) addLeft(id, reason string) {
	t.add(id, reason)
	if t.left == nil {
		t.left = map[string]bool{}
	}
	t.left[id] = true
}

func (t *tombstones) why(id string) (string, bool) {
	r, ok := t.reason[id]
	return r, ok
}
