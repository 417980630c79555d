package barrier

import "fmt"

// Config describes one shuffle as the coordinator pinned it at creation.
type Config struct {
	// Shuffle is the shuffle ID; it names the shuffle in every error.
	Shuffle string
	// Tasks is the number of input tasks; task IDs are 0..Tasks-1.
	Tasks int
	// Receivers are the node names that own output partitions in epoch 0.
	// Every task attempt sends an end-of-task marker to each of them, so
	// each must commit every task. Names must be unique and non-empty.
	Receivers []string
}

// Validate reports whether c describes a shuffle the Tracker can run. The
// error wraps ErrInvalidConfig.
func (c Config) Validate() error {
	switch {
	case c.Shuffle == "":
		return fmt.Errorf("%w: empty shuffle ID", ErrInvalidConfig)
	case c.Tasks <= 0:
		return fmt.Errorf("%w: shuffle %s: tasks = %d, want > 0", ErrInvalidConfig, c.Shuffle, c.Tasks)
	}
	return validateReceivers(c.Shuffle, c.Receivers)
}

// validateReceivers checks a receiver set: non-empty, unique, non-empty names.
func validateReceivers(shuffle string, receivers []string) error {
	if len(receivers) == 0 {
		return fmt.Errorf("%w: shuffle %s: no receivers", ErrInvalidConfig, shuffle)
	}
	seen := make(map[string]struct{}, len(receivers))
	for _, r := range receivers {
		if r == "" {
			return fmt.Errorf("%w: shuffle %s: empty receiver name", ErrInvalidConfig, shuffle)
		}
		if _, dup := seen[r]; dup {
			return fmt.Errorf("%w: shuffle %s: receiver %s listed twice", ErrInvalidConfig, shuffle, r)
		}
		seen[r] = struct{}{}
	}
	return nil
}
