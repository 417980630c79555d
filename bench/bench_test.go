package bench

import (
	"context"
	"io"
	"testing"

	"github.com/shufflenode/shufflenode/job"
)

// TestBenchRepeatSharesCluster: with Repeat, the runs of one job go to one
// in-process cluster that is up for all of them, and the next job gets a
// cluster of its own again; every run prints a numbered row.
func TestBenchRepeatSharesCluster(t *testing.T) {
	b := &bench{cfg: BenchConfig{Cluster: job.ClusterConfig{Nodes: 2, MemoryLimit: 64 << 20}, Repeat: 3}.withDefaults(), w: io.Discard}
	var addrs []string
	probe := func(ctx context.Context) (benchRow, error) {
		addrs = append(addrs, b.cfg.Cluster.Addr)
		if _, err := job.ClusterMembers(ctx, b.cfg.Cluster.Addr, b.cfg.Cluster.Auth); err != nil {
			t.Errorf("run %d: the shared cluster does not answer: %v", len(addrs), err)
		}
		return benchRow{name: "probe", bytes: 1, put: 1}, nil
	}
	if err := b.repeat(context.Background(), probe); err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 3 || addrs[0] == "" || addrs[1] != addrs[0] || addrs[2] != addrs[0] {
		t.Errorf("runs went to clusters %q, want one shared cluster for all 3", addrs)
	}
	if b.cfg.Cluster.Addr != "" {
		t.Errorf("after the runs the jobs point at %q, want an in-process cluster of their own", b.cfg.Cluster.Addr)
	}
	for i, r := range b.rows {
		if want := "probe #" + string(rune('1'+i)); r.name != want {
			t.Errorf("row %d is %q, want %q", i, r.name, want)
		}
	}
	if _, err := job.ClusterMembers(context.Background(), addrs[0], b.cfg.Cluster.Auth); err == nil {
		t.Errorf("the shared cluster at %s still answers after its job", addrs[0])
	}
}

func TestBenchRepeatValidates(t *testing.T) {
	for _, n := range []int{-1, maxRepeat + 1} {
		if err := (BenchConfig{Repeat: n}).Validate(); err == nil {
			t.Errorf("repeat %d passed validation", n)
		}
	}
	if c := (BenchConfig{}).withDefaults(); c.Repeat != 1 {
		t.Errorf("default repeat %d, want 1", c.Repeat)
	}
}
