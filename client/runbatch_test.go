package client

import (
	"testing"

	"github.com/shufflenode/shufflenode/spec"
)

// TestPutBatchDefault: a job of few tasks puts one per stream, a job of
// many small ones in batches of at most maxPutBatch (an array's, of at most
// arrayBatchBytes of chunks of at most maxBatchedChunkBytes), and an
// explicit PutBatch is taken as it is.
func TestPutBatchDefault(t *testing.T) {
	df := &spec.Spec{Kind: spec.Dataframe}
	array := func(rows, cols int64) *spec.Spec {
		return &spec.Spec{Kind: spec.Array, DType: "<f8", OldChunks: spec.Chunks{{rows, rows}, {cols}}}
	}
	cases := []struct {
		name       string
		job        Job
		n, workers int
		want       int
	}{
		{"few tasks", Job{Spec: df}, 1000, 8, 1},
		{"many tasks", Job{Spec: df}, 10000, 8, 64},
		{"just past the threshold", Job{Spec: df}, 2000, 8, 62},
		{"explicit", Job{Spec: df, PutBatch: 5}, 100, 8, 5},
		{"array of 80 kB chunks", Job{Spec: array(1, 10000)}, 10000, 8, 64},
		{"array of 800 kB chunks", Job{Spec: array(10, 10000)}, 10000, 8, 10},
		{"array of 8 MiB chunks", Job{Spec: array(128, 8192)}, 10000, 8, 1},
		{"array of few chunks", Job{Spec: array(1, 10000)}, 1000, 8, 1},
		{"array of an unknown size", Job{Spec: array(-1, 10)}, 10000, 8, 1},
		{"array of an unknown dtype", Job{Spec: &spec.Spec{Kind: spec.Array}}, 10000, 8, 1},
	}
	for _, c := range cases {
		if got := c.job.putBatch(c.n, c.workers); got != c.want {
			t.Errorf("%s: putBatch(%d, %d) = %d, want %d", c.name, c.n, c.workers, got, c.want)
		}
	}
}
