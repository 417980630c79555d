package limits

import (
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/spec"
)

// ErrLimit: a create asks more than a node allows (Caps); the error names
// the limit, the shuffle and the node.
var ErrLimit = errors.New("limits: over a node limit")

// Caps are what one node allows its clients to ask of it (serve
// --max-shuffles, --max-tasks, --max-partitions, --max-runs). Every field
// is required.
type Caps struct {
	// Node is the node's name, for the errors.
	Node string
	// MaxShuffles caps the shuffles the node holds at once.
	MaxShuffles int
	// MaxTasks and MaxPartitions cap one spec's input tasks and output
	// partitions.
	MaxTasks, MaxPartitions int
	// MaxRuns caps the runs an array spec's distributed axes plan into.
	MaxRuns int64
}

// CheckSpec refuses a spec with more tasks, partitions or plan runs
// than the node allows. It costs O(size of the spec) and runs before
// anything is planned or allocated for it.
func (c Caps) CheckSpec(sp *spec.Spec) error {
	switch {
	case sp.Tasks > c.MaxTasks:
		return fmt.Errorf("%w: shuffle %s: %d tasks, over node %s's limit of %d (MaxTasks, serve --max-tasks)",
			ErrLimit, sp.ID, sp.Tasks, c.Node, c.MaxTasks)
	case sp.Partitions > c.MaxPartitions:
		return fmt.Errorf("%w: shuffle %s: %d partitions, over node %s's limit of %d (MaxPartitions, serve --max-partitions)",
			ErrLimit, sp.ID, sp.Partitions, c.Node, c.MaxPartitions)
	case sp.Kind == spec.Array && sp.Runs() > c.MaxRuns:
		return fmt.Errorf("%w: shuffle %s: its distributed axes plan into %d runs, over node %s's limit of %d (MaxRuns, serve --max-runs): use larger cyclic blocks",
			ErrLimit, sp.ID, sp.Runs(), c.Node, c.MaxRuns)
	}
	return nil
}

// CheckOpen refuses shuffle id when the node holds held shuffles, its
// MaxShuffles or more.
func (c Caps) CheckOpen(id string, held int) error {
	if held >= c.MaxShuffles {
		return fmt.Errorf("%w: shuffle %s: node %s holds %d shuffles, its limit (MaxShuffles, serve --max-shuffles): close some first",
			ErrLimit, id, c.Node, held)
	}
	return nil
}
