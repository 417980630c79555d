package integration

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestProcessKillDuringBatchedPuts is TestProcessKillDuringPuts with the
// tasks put four to a DoPut stream: a SIGKILL before a seeded task fails
// the streams on the victim and the tasks of every stream that had sent
// rows to it; the shuffle still finishes with every row exactly once, one
// epoch later, having replayed only tasks done before the kill (up to a
// batch per concurrent put more than with a stream per task).
func TestProcessKillDuringBatchedPuts(t *testing.T) {
	t.Parallel()
	const batch = 4
	for seed := range 4 {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), 9))
			victim, at := 1+rng.IntN(3), rng.IntN(procTasks)
			c := startProcs(t, 4)
			cfg := procDemo(fmt.Sprintf("batched-%d", seed), uint64(seed))
			cfg.PutBatch = batch
			cfg.BeforeInput = killAt(c.procs[victim], at)
			rep, err := runDemo(t, c.apis(), cfg)
			t.Logf("seed %d: %s killed before task %d", seed, c.procs[victim].name, at)
			lo, hi := replayBounds(at, procParallel*batch, procTasks)
			checkRecovered(t, rep, err, 1, lo, hi)
		})
	}
}
