package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/table"
)

// demoFlags are the flags shared by demo and bench.
type demoFlags struct {
	nodes      int
	data       byteSize
	tasks      int
	partitions int
	payload    int
	rule       string
	memLimit   byteSize
	dataDir    string
	seed       uint64
	logLevel   string
	cpuProfile string
}

func (f *demoFlags) register(fs *flag.FlagSet) {
	f.data, f.memLimit = 500<<20, 1<<30
	fs.IntVar(&f.nodes, "nodes", 4, "nodes in the in-process cluster")
	fs.Var(&f.data, "data", "approximate size of the synthetic table (Arrow bytes)")
	fs.IntVar(&f.tasks, "tasks", 1000, "input tasks (partitions of the input)")
	fs.IntVar(&f.partitions, "partitions", 1000, "output partitions")
	fs.IntVar(&f.payload, "payload", 100, "bytes of the string column per row")
	fs.StringVar(&f.rule, "rule", "hash", "partitioning rule: hash or range (on the key column)")
	fs.Var(&f.memLimit, "memory-limit", "memory budget per node (send buffers + in-memory spill store)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory for node identities and spill files (default: a temporary directory, removed at exit)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the synthetic data")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
}

// rows is the number of rows that make about f.data bytes.
func (f *demoFlags) rows() int64 {
	return max(int64(f.data)/table.GenRowBytes(table.GenConfig{PayloadBytes: f.payload}), 1)
}

func cmdDemo(args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	fs := newFlags("demo", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	resetPeakRSS()
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	rep, err := runDemo(ctx, f, newProgress(stderr))
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	printReport(stdout, f, rep)
	return 0
}

// runDemo starts an in-process cluster, runs the demo on it and stops it.
func runDemo(ctx context.Context, f demoFlags, prog func(string, int, int)) (job.Report, error) {
	dir := f.dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "shufflenode-demo-")
		if err != nil {
			return job.Report{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	log := newLogger(os.Stderr, f.logLevel)
	nodes, err := node.StartLocal(ctx, f.nodes, node.Config{
		Cluster: dht.Config{DataDir: dir, Profile: "local", Logger: log},
		Service: service.Config{MemoryLimit: int64(f.memLimit), Logger: log},
		Logger:  log,
	})
	if err != nil {
		return job.Report{}, err
	}
	defer node.CloseAll(nodes)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.APIAddr()
	}
	return job.RunDemo(ctx, addrs, job.DemoConfig{
		ID: fmt.Sprintf("demo-%d", time.Now().UnixNano()), Rows: f.rows(), Tasks: f.tasks,
		Partitions: f.partitions, PayloadBytes: f.payload, Seed: f.seed, Rule: f.rule, Progress: prog,
	})
}

func printReport(w io.Writer, f demoFlags, r job.Report) {
	fmt.Fprintf(w, "verified: every row arrived exactly once, in the partition its key maps to\n")
	fmt.Fprintf(w, "nodes        %d\n", f.nodes)
	fmt.Fprintf(w, "rows         %d\n", r.Rows)
	fmt.Fprintf(w, "bytes        %d (%s)\n", r.Bytes, formatBytes(r.Bytes))
	fmt.Fprintf(w, "tasks        %d -> partitions %d (%s)\n", r.Tasks, r.Partitions, f.rule)
	fmt.Fprintf(w, "shuffle      %.2f s (create, put, barrier)\n", r.ShuffleSeconds)
	fmt.Fprintf(w, "read         %.2f s (every partition back from its owner)\n", r.ReadSeconds)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s\n", r.TotalSeconds, r.MBps())
	fmt.Fprintf(w, "peak RSS     %s (whole process: %d nodes, client and verifier)\n", formatBytes(peakRSS()), f.nodes)
}

// newProgress returns a progress callback that redraws one line on w.
func newProgress(w io.Writer) func(string, int, int) {
	var mu sync.Mutex
	last := time.Time{}
	return func(phase string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if done < total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		const width = 40
		n := width * done / max(total, 1)
		fmt.Fprintf(w, "\r%-5s [%-*s] %d/%d", phase, width, bar(n), done, total)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}

func bar(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '#'
	}
	return string(b)
}
