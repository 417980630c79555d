package client

import (
	"testing"

	"github.com/shufflenode/shufflenode/spec"
)

// TestWorkers: a dataframe job puts 2 tasks per node at once; an array job
// keeps about 16 MiB of old chunks per node in flight, from 2 to 16 puts,
// and 2 where a chunk's size is unknown; Job.Parallel overrides both.
func TestWorkers(t *testing.T) {
	nodes := []string{"a", "b", "c", "d"}
	array := func(dtype string, rows, cols int64) *spec.Spec {
		return &spec.Spec{Kind: spec.Array, DType: dtype, OldChunks: spec.Chunks{{rows, rows}, {cols}}}
	}
	for _, c := range []struct {
		name     string
		sp       *spec.Spec
		parallel int
		want     int
	}{
		{"dataframe", &spec.Spec{Kind: spec.Dataframe}, 0, 8},
		{"array of 80 kB chunks", array("<f8", 1, 10000), 0, 64},
		{"array of 800 kB chunks", array("<f8", 10, 10000), 0, 64},
		{"array of 4 MiB chunks", array("<f8", 64, 8192), 0, 16},
		{"array of 64 MiB chunks", array("<f8", 1024, 8192), 0, 8},
		{"array of an unknown size", array("<f8", -1, 10), 0, 8},
		{"array of an unknown dtype", array("?", 1, 10), 0, 8},
		{"Parallel", array("<f8", 1, 10000), 3, 3},
	} {
		job := Job{Spec: c.sp, Nodes: nodes, Parallel: c.parallel}
		if got := job.workers(); got != c.want {
			t.Errorf("%s: %d puts at once, want %d", c.name, got, c.want)
		}
	}
}
