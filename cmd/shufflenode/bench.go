package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"

	"github.com/shufflenode/shufflenode/job"
)

func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "shuffle" && args[0] != "recovery") {
		fmt.Fprintln(stderr, "usage: shufflenode bench shuffle|recovery [demo flags]")
		return 2
	}
	var f demoFlags
	fs := newFlags("bench "+args[0], stderr)
	f.register(fs)
	if code, ok := parse(fs, args[1:]); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if args[0] == "recovery" {
		return benchRecovery(ctx, f, stdout, stderr)
	}
	fmt.Fprintf(stdout, "%-34s %8s %8s %9s %10s\n", "case", "seconds", "MB/s", "peak RSS", "budget")
	for _, c := range benchCases(f) {
		runtime.GC()
		job.ResetPeakRSS()
		rep, err := job.RunDemoOn(ctx, c.flags.clusterConfig(stderr), c.flags.demoConfig(nil))
		if err != nil {
			fmt.Fprintf(stderr, "bench %s: %v\n", c.name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%-34s %8.2f %8.1f %9s %10s\n", c.name, rep.TotalSeconds, rep.MBps(),
			job.FormatBytes(job.PeakRSS()), job.FormatBytes(int64(c.flags.memLimit)))
	}
	return 0
}

type benchCase struct {
	name  string
	flags demoFlags
}

// benchCases: the demo workload at 100 and 1000 partitions, then with a
// per-node budget of 1/8 of the data (so most of it spills to badger).
func benchCases(f demoFlags) []benchCase {
	p100, p1000, small := f, f, f
	p100.partitions, p1000.partitions = 100, 1000
	small.partitions = 1000
	small.memLimit = byteSize(int64(f.data) / 8)
	name := func(p int, extra string) string {
		return fmt.Sprintf("%s %d->%d x%d%s", job.FormatBytes(int64(f.data)), f.tasks, p, f.nodes, extra)
	}
	return []benchCase{
		{name(100, ""), p100},
		{name(1000, ""), p1000},
		{name(1000, " budget/8"), small},
	}
}
