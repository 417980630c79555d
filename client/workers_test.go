package client

import (
	"cmp"
	"testing"

	"github.com/shufflenode/shufflenode/spec"
)

// TestWorkers: a dataframe job puts 2 tasks (or streams of several) per
// node at once; an array job of chunks put one to a stream keeps about 16
// MiB of old chunks per node in flight, from 2 to 16 puts, and 2 where a
// chunk's size is unknown; one whose chunks go several to a stream has 2
// streams per node; Job.Parallel overrides all.
func TestWorkers(t *testing.T) {
	nodes := []string{"a", "b", "c", "d"}
	array := func(dtype string, rows, cols int64) *spec.Spec {
		return &spec.Spec{Kind: spec.Array, DType: dtype, OldChunks: spec.Chunks{{rows, rows}, {cols}}}
	}
	for _, c := range []struct {
		name     string
		sp       *spec.Spec
		parallel int
		n        int // tasks to put (0: 1,000)
		want     int
	}{
		{"dataframe", &spec.Spec{Kind: spec.Dataframe}, 0, 0, 8},
		{"dataframe of many tasks", &spec.Spec{Kind: spec.Dataframe}, 0, 10000, 8},
		{"array of 80 kB chunks", array("<f8", 1, 10000), 0, 0, 64},
		{"array of 800 kB chunks", array("<f8", 10, 10000), 0, 0, 64},
		{"array of 4 MiB chunks", array("<f8", 64, 8192), 0, 0, 16},
		{"array of 64 MiB chunks", array("<f8", 1024, 8192), 0, 0, 8},
		{"array of an unknown size", array("<f8", -1, 10), 0, 0, 8},
		{"array of an unknown dtype", array("?", 1, 10), 0, 0, 8},
		{"array of many small chunks", array("<f8", 1, 10000), 0, 10000, 8},
		{"array of many 4 MiB chunks", array("<f8", 64, 8192), 0, 10000, 16},
		{"Parallel", array("<f8", 1, 10000), 3, 10000, 3},
	} {
		job := Job{Spec: c.sp, Nodes: nodes, Parallel: c.parallel}
		if got := job.workers(cmp.Or(c.n, 1000)); got != c.want {
			t.Errorf("%s: %d puts at once, want %d", c.name, got, c.want)
		}
	}
}
