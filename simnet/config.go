package simnet

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/shufflenode/shufflenode/wire"
)

// Config configures a Network. The zero value is a perfect network: no
// delay, no loss, no duplicates.
type Config struct {
	// Rand draws every fault and delay. Seed it to make a run's decisions
	// reproducible. The Network owns it from New on. Default: a PCG seeded
	// with (1, 2).
	Rand *rand.Rand
	// MaxDelay is the jitter: each delivery waits a uniform time in
	// [0, MaxDelay) before the handler runs.
	MaxDelay time.Duration
	// DropRequest is the probability that a request is lost before the
	// handler runs.
	DropRequest float64
	// DropReply is the probability that the reply is lost after the handler
	// ran.
	DropReply float64
	// Duplicate is the probability that the frame is delivered a second
	// time.
	Duplicate float64
	// Faulty, if set, limits the drawn faults (drops and duplicates, not
	// delays) to the requests it returns true for, e.g. only shard frames.
	Faulty func(from, to string, t wire.Type) bool
	// RecordRank, if set, is the rule of every record key (as a
	// dht.RecordRule's Rank): values it rejects are refused, and of two
	// values of one key the higher rank stays (ties: the later put).
	RecordRank func(key string, value []byte) (uint64, error)
	// APIAddr, if set, gives each node's member its API address (none by
	// default: nothing serves one).
	APIAddr func(name string) string
}

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config {
	return Config{Rand: rand.New(rand.NewPCG(1, 2))}
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	for name, p := range map[string]float64{"DropRequest": c.DropRequest, "DropReply": c.DropReply, "Duplicate": c.Duplicate} {
		if p < 0 || p > 1 {
			return fmt.Errorf("%w: %s %v not in [0, 1]", ErrConfig, name, p)
		}
	}
	if c.MaxDelay < 0 {
		return fmt.Errorf("%w: negative MaxDelay %v", ErrConfig, c.MaxDelay)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Rand == nil {
		c.Rand = DefaultConfig().Rand
	}
	return c
}
