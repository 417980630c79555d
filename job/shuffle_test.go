package job

import (
	"runtime"
	"testing"
)

func TestPartFile(t *testing.T) {
	cases := []struct {
		p, n int
		want string
	}{
		{0, 1, "part-00000.parquet"},
		{99999, 100000, "part-99999.parquet"},
		{7, 100001, "part-000007.parquet"},
		{4194303, 4194304, "part-4194303.parquet"},
	}
	for _, tc := range cases {
		if got := PartFile(tc.p, tc.n); got != tc.want {
			t.Errorf("PartFile(%d, %d) = %s, want %s", tc.p, tc.n, got, tc.want)
		}
	}
}

// TestPutParallel: --parallel wins; a running cluster keeps the client's
// default (0: 2 per node); an in-process cluster puts at most 2 files per
// core at once, and 2 per node when it has fewer nodes than cores.
func TestPutParallel(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	nodes := func(n int) []string { return make([]string, n) }
	for _, tc := range []struct {
		name string
		f    ShuffleConfig
		cl   *Cluster
		want int
	}{
		{"given", ShuffleConfig{Parallel: 5}, &Cluster{Embedded: true, Addrs: nodes(4)}, 5},
		{"running cluster", ShuffleConfig{}, &Cluster{Addrs: nodes(4 * cores)}, 0},
		{"in-process, more nodes than cores", ShuffleConfig{}, &Cluster{Embedded: true, Addrs: nodes(4 * cores)}, 2 * cores},
		{"in-process, one node", ShuffleConfig{}, &Cluster{Embedded: true, Addrs: nodes(1)}, 2},
	} {
		if got := putParallel(tc.f, tc.cl); got != tc.want {
			t.Errorf("%s: %d puts at once, want %d", tc.name, got, tc.want)
		}
	}
}
