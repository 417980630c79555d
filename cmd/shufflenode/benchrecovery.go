package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// benchRecovery runs the demo workload four times on fresh in-process
// clusters: without failure and with one node (not the coordinator)
// crashed halfway through the puts, each with replication 1 and 2.
func benchRecovery(ctx context.Context, f demoFlags, stdout, stderr io.Writer) int {
	fmt.Fprintf(stdout, "%-34s %8s %8s %9s %7s %9s\n", "case", "seconds", "MB/s", "puts", "replay", "peak RSS")
	for _, c := range []struct {
		name        string
		replication int
		kill        bool
	}{{"no failure", 1, false}, {"one node killed halfway", 1, true},
		{"replication 2, no failure", 2, false}, {"replication 2, one killed halfway", 2, true}} {
		job.ResetPeakRSS()
		rep, err := recoveryRun(ctx, f, stderr, c.replication, c.kill)
		if err != nil {
			fmt.Fprintf(stderr, "bench recovery %s: %v\n", c.name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%-34s %8.2f %8.1f %9d %7d %9s\n", c.name, rep.TotalSeconds, rep.MBps(),
			rep.Attempts, rep.ReplaySet, job.FormatBytes(job.PeakRSS()))
	}
	return 0
}

// recoveryRun runs one case; the victim is node 1 (node 0 coordinates).
func recoveryRun(ctx context.Context, f demoFlags, stderr io.Writer, replication int, kill bool) (job.Report, error) {
	dir, err := os.MkdirTemp("", "shufflenode-bench-")
	if err != nil {
		return job.Report{}, err
	}
	defer os.RemoveAll(dir)
	log := newLogger(stderr, f.logLevel)
	nodes, err := node.StartLocal(ctx, f.nodes, node.Config{
		Cluster: dht.Config{DataDir: dir, Profile: "local", Logger: log},
		Service: service.Config{MemoryLimit: int64(f.memLimit), Logger: log}, Logger: log})
	if err != nil {
		return job.Report{}, err
	}
	defer node.CloseAll(nodes)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.APIAddr()
	}
	var once sync.Once
	cfg := job.DemoConfig{ID: fmt.Sprintf("bench-%d", time.Now().UnixNano()), Rows: f.rows(), Tasks: f.tasks,
		Partitions: f.partitions, PayloadBytes: f.payload, Seed: f.seed, Parallel: f.parallel, Replication: replication}
	if kill && len(nodes) > 1 {
		cfg.BeforeInput = func(t int) {
			if t == f.tasks/2 {
				once.Do(func() { go nodes[1].Close() })
			}
		}
	}
	return job.RunDemo(ctx, addrs, cfg)
}
