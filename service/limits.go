package service

import (
	"fmt"

	"github.com/shufflenode/shufflenode/spec"
)

// checkSpecLimits refuses a spec with more tasks, partitions or plan runs
// than this node allows. It costs O(size of the spec) and runs before
// anything is planned or allocated for it.
func (s *Service) checkSpecLimits(sp *spec.Spec) error {
	switch {
	case sp.Tasks > s.cfg.MaxTasks:
		return fmt.Errorf("%w: shuffle %s: %d tasks, over node %s's limit of %d (MaxTasks, serve --max-tasks)",
			ErrLimit, sp.ID, sp.Tasks, s.Name(), s.cfg.MaxTasks)
	case sp.Partitions > s.cfg.MaxPartitions:
		return fmt.Errorf("%w: shuffle %s: %d partitions, over node %s's limit of %d (MaxPartitions, serve --max-partitions)",
			ErrLimit, sp.ID, sp.Partitions, s.Name(), s.cfg.MaxPartitions)
	case sp.Kind == spec.Array && sp.Runs() > s.cfg.MaxRuns:
		return fmt.Errorf("%w: shuffle %s: its distributed axes plan into %d runs, over node %s's limit of %d (MaxRuns, serve --max-runs): use larger cyclic blocks",
			ErrLimit, sp.ID, sp.Runs(), s.Name(), s.cfg.MaxRuns)
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
