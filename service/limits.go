package service

import (
	"fmt"

	"github.com/shufflenode/shufflenode/spec"
)

// checkSpecLimits refuses a spec with more tasks or partitions than this
// node allows.
func (s *Service) checkSpecLimits(sp *spec.Spec) error {
	switch {
	case sp.Tasks > s.cfg.MaxTasks:
		return fmt.Errorf("%w: shuffle %s: %d tasks, over node %s's limit of %d (MaxTasks, serve --max-tasks)",
			ErrLimit, sp.ID, sp.Tasks, s.Name(), s.cfg.MaxTasks)
	case sp.Partitions > s.cfg.MaxPartitions:
		return fmt.Errorf("%w: shuffle %s: %d partitions, over node %s's limit of %d (MaxPartitions, serve --max-partitions)",
			ErrLimit, sp.ID, sp.Partitions, s.Name(), s.cfg.MaxPartitions)
	}
	return nil
}

// checkOpenLocked refuses shuffle id when this node holds MaxShuffles
// already. The caller holds s.mu.
func (s *Service) checkOpenLocked(id string) error {
	if n := len(s.shuffles); n >= s.cfg.MaxShuffles {
		return fmt.Errorf("%w: shuffle %s: node %s holds %d shuffles, its limit (MaxShuffles, serve --max-shuffles): close some first",
			ErrLimit, id, s.Name(), n)
	}
	return nil
}

// checkOpen is checkOpenLocked for a caller without the lock.
func (s *Service) checkOpen(id string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.checkOpenLocked(id)
}
