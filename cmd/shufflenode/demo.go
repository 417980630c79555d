package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/job"
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
	memProfile string
	parallel   int
	cluster    string
	// --array: rechunk a synthetic array instead
	array                       bool
	shape, oldChunks, newChunks string
	dtype                       string
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
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile at the end of the shuffle to this file")
	fs.StringVar(&f.cluster, "cluster", "", "API address of a running cluster's member (default: an in-process cluster)")
	fs.IntVar(&f.parallel, "parallel", 0, "input tasks put at once (default 2 per node)")
	fs.BoolVar(&f.array, "array", false, "rechunk a synthetic n-d array instead of shuffling a table")
	fs.StringVar(&f.shape, "shape", "10000,10000", "--array: the array's shape")
	fs.StringVar(&f.oldChunks, "old-chunks", "10,10000", "--array: chunk shape of the input")
	fs.StringVar(&f.newChunks, "new-chunks", "10000,10", "--array: chunk shape of the output")
	fs.StringVar(&f.dtype, "dtype", "<f8", "--array: NumPy dtype")
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
	if f.array {
		return arrayDemo(ctx, f, stdout, stderr)
	}
	rep, err := runDemo(ctx, f, newProgress(stderr))
	if f.memProfile != "" {
		writeHeapProfile(f.memProfile, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	printReport(stdout, f, rep)
	return 0
}

// arrayDemo runs and reports the array demo.
func arrayDemo(ctx context.Context, f demoFlags, stdout, stderr io.Writer) int {
	cfg, err := f.arrayConfig()
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 2
	}
	addrs, stop, err := openCluster(ctx, f.clusterOpts(), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	defer stop()
	cfg.Progress = newProgress(stderr)
	rep, err := job.RunArrayDemo(ctx, addrs, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "verified: every element of every new chunk equals the input's\n")
	fmt.Fprintf(stdout, "nodes        %d\n", f.nodes)
	fmt.Fprintf(stdout, "array        %s %s, chunks %s -> %s (%d -> %d chunks)\n", f.dtype, f.shape, f.oldChunks, f.newChunks, rep.OldChunks, rep.NewChunks)
	fmt.Fprintf(stdout, "bytes        %d (%s)\n", rep.Bytes, formatBytes(rep.Bytes))
	fmt.Fprintf(stdout, "rechunk      %.2f s (create, put, barrier)\n", rep.ShuffleSeconds)
	fmt.Fprintf(stdout, "read         %.2f s (every new chunk back from its owner)\n", rep.ReadSeconds)
	fmt.Fprintf(stdout, "total        %.2f s, %.1f MB/s\n", rep.TotalSeconds, rep.MBps())
	fmt.Fprintf(stdout, "peak RSS     %s (whole process)\n", formatBytes(peakRSS()))
	return 0
}

// arrayConfig builds the array demo from the flags.
func (f *demoFlags) arrayConfig() (job.ArrayConfig, error) {
	shape, err := parseShape(f.shape, len(strings.Split(f.shape, ",")))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--shape: %w", err)
	}
	old, err := parseShape(f.oldChunks, len(shape))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--old-chunks: %w", err)
	}
	new, err := parseShape(f.newChunks, len(shape))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--new-chunks: %w", err)
	}
	return job.ArrayConfig{ID: fmt.Sprintf("array-demo-%d", time.Now().UnixNano()), DType: f.dtype,
		Old: regularChunks(shape, old), New: regularChunks(shape, new), Parallel: f.parallel}, nil
}

// runDemo starts an in-process cluster, runs the demo on it and stops it.
func runDemo(ctx context.Context, f demoFlags, prog func(string, int, int)) (job.Report, error) {
	addrs, stop, err := openCluster(ctx, f.clusterOpts(), os.Stderr)
	if err != nil {
		return job.Report{}, err
	}
	defer stop()
	return job.RunDemo(ctx, addrs, job.DemoConfig{
		ID: fmt.Sprintf("demo-%d", time.Now().UnixNano()), Rows: f.rows(), Tasks: f.tasks,
		Partitions: f.partitions, PayloadBytes: f.payload, Seed: f.seed, Rule: f.rule, Progress: prog,
		Parallel: f.parallel,
	})
}

// clusterOpts is the in-process cluster of the demo flags.
func (f *demoFlags) clusterOpts() clusterOpts {
	return clusterOpts{cluster: f.cluster, nodes: f.nodes, memLimit: int64(f.memLimit), dataDir: f.dataDir, logLevel: f.logLevel}
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
