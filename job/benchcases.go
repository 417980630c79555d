package job

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// BenchShuffle runs the dataframe demo c on fresh clusters at 100 and 1000
// partitions, then at 1000 with a per-node budget of 1/8 of data (so most
// of it spills), and writes one line each to w (bench shuffle).
func BenchShuffle(ctx context.Context, w io.Writer, cc ClusterConfig, c DemoConfig, data int64) error {
	fmt.Fprintf(w, "%-34s %8s %8s %9s %10s\n", "case", "seconds", "MB/s", "peak RSS", "budget")
	name := func(p int, extra string) string {
		return fmt.Sprintf("%s %d->%d x%d%s", FormatBytes(data), c.Tasks, p, cc.Nodes, extra)
	}
	small := cc
	small.MemoryLimit = data / 8
	for _, k := range []struct {
		name  string
		parts int
		cc    ClusterConfig
	}{{name(100, ""), 100, cc}, {name(1000, ""), 1000, cc}, {name(1000, " budget/8"), 1000, small}} {
		runtime.GC()
		ResetPeakRSS()
		run := c
		run.Partitions, run.ID = k.parts, fmt.Sprintf("demo-%d", time.Now().UnixNano())
		rep, err := RunDemoOn(ctx, k.cc, run)
		if err != nil {
			return fmt.Errorf("bench %s: %w", k.name, err)
		}
		fmt.Fprintf(w, "%-34s %8.2f %8.1f %9s %10s\n", k.name, rep.TotalSeconds, rep.MBps(),
			FormatBytes(PeakRSS()), FormatBytes(k.cc.MemoryLimit))
	}
	return nil
}

// BenchRecovery runs the demo c four times on fresh in-process clusters:
// without failure and with one node (not the coordinator) crashed halfway
// through the puts, each with replication 1 and 2 (bench recovery).
func BenchRecovery(ctx context.Context, w io.Writer, cc ClusterConfig, c DemoConfig) error {
	fmt.Fprintf(w, "%-34s %8s %8s %9s %7s %9s\n", "case", "seconds", "MB/s", "puts", "replay", "peak RSS")
	for _, k := range []struct {
		name        string
		replication int
		kill        bool
	}{{"no failure", 1, false}, {"one node killed halfway", 1, true},
		{"replication 2, no failure", 2, false}, {"replication 2, one killed halfway", 2, true}} {
		ResetPeakRSS()
		rep, err := recoveryRun(ctx, cc, c, k.replication, k.kill)
		if err != nil {
			return fmt.Errorf("bench recovery %s: %w", k.name, err)
		}
		fmt.Fprintf(w, "%-34s %8.2f %8.1f %9d %7d %9s\n", k.name, rep.TotalSeconds, rep.MBps(),
			rep.Attempts, rep.ReplaySet, FormatBytes(PeakRSS()))
	}
	return nil
}

// recoveryRun runs one case; the victim is node 1 (node 0 coordinates).
func recoveryRun(ctx context.Context, cc ClusterConfig, c DemoConfig, replication int, kill bool) (Report, error) {
	dir, err := os.MkdirTemp("", "shufflenode-bench-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	nodes, err := node.StartLocal(ctx, cc.Nodes, node.Config{
		Cluster: dht.Config{DataDir: dir, Profile: "local", Logger: cc.Logger},
		Service: service.Config{MemoryLimit: cc.MemoryLimit, Logger: cc.Logger}, Logger: cc.Logger})
	if err != nil {
		return Report{}, err
	}
	defer node.CloseAll(nodes)
	var once sync.Once
	c.ID, c.Replication, c.Rule, c.Progress = fmt.Sprintf("bench-%d", time.Now().UnixNano()), replication, "", nil
	if kill && len(nodes) > 1 {
		c.BeforeInput = func(t int) {
			if t == c.Tasks/2 {
				once.Do(func() { go nodes[1].Close() })
			}
		}
	}
	return RunDemo(ctx, APIAddrs(nodes), c)
}
