package client

import (
	"testing"

	"github.com/shufflenode/shufflenode/spec"
)

// TestPutBatchDefault: a job of few tasks puts one per stream, a job of
// many small ones in batches of at most maxPutBatch, and an explicit
// PutBatch or an array job is taken as it is.
func TestPutBatchDefault(t *testing.T) {
	df := &spec.Spec{Kind: spec.Dataframe}
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
		{"array", Job{Spec: &spec.Spec{Kind: spec.Array}}, 10000, 8, 1},
	}
	for _, c := range cases {
		if got := c.job.putBatch(c.n, c.workers); got != c.want {
			t.Errorf("%s: putBatch(%d, %d) = %d, want %d", c.name, c.n, c.workers, got, c.want)
		}
	}
}
