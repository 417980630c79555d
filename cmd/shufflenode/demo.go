package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
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
	putBatch   int
	cluster    string
	auth       clientAuthFlags
	// failure detector of the in-process cluster (0: the local profile's)
	probeInterval, probeTimeout time.Duration
	suspicionMult               int
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
	fs.IntVar(&f.parallel, "parallel", 0, "input tasks put at once (default 2 per node; with --array, up to 16 per node while they hold at most 16 MiB)")
	fs.IntVar(&f.putBatch, "put-batch", 0, "tasks per put stream (0: a stream per task below 2,000 tasks or for array chunks over 1 MiB, else about four batches per parallel put, at most 64 and 8 MiB of chunks; 1: a stream per task)")
	fs.BoolVar(&f.array, "array", false, "rechunk a synthetic n-d array instead of shuffling a table")
	fs.StringVar(&f.shape, "shape", "10000,10000", "--array: the array's shape")
	fs.StringVar(&f.oldChunks, "old-chunks", "10,10000", "--array: chunk shape of the input")
	fs.StringVar(&f.newChunks, "new-chunks", "10000,10", "--array: chunk shape of the output")
	fs.StringVar(&f.dtype, "dtype", "<f8", "--array: NumPy dtype")
	fs.DurationVar(&f.probeInterval, "probe-interval", 0, "in-process cluster: failure detector probe interval (0: the local profile's, 1s)")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", 0, "in-process cluster: failure detector probe timeout (0: the local profile's, 200ms)")
	fs.IntVar(&f.suspicionMult, "suspicion-mult", 0, "in-process cluster: failure detector suspicion multiplier (0: the local profile's, 3)")
	f.auth.register(fs)
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
	cc := f.clusterConfig(stderr)
	if err := f.auth.resolve(&cc); err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	measure.ResetPeakRSS()
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	if f.array {
		return arrayDemo(ctx, f, cc, stdout, stderr)
	}
	rep, err := job.RunDemoOn(ctx, cc, f.demoConfig(job.NewProgress(stderr)))
	if f.memProfile != "" {
		writeHeapProfile(f.memProfile, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	rep.Print(stdout)
	return 0
}

// arrayDemo runs and reports the array demo.
func arrayDemo(ctx context.Context, f demoFlags, cc job.ClusterConfig, stdout, stderr io.Writer) int {
	cfg, err := f.arrayConfig()
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 2
	}
	cfg.Progress = job.NewProgress(stderr)
	rep, err := job.RunArrayDemoOn(ctx, cc, cfg, f.arrayDesc())
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode demo: %v\n", err)
		return 1
	}
	rep.Print(stdout)
	return 0
}

// arrayDesc describes the array for the report.
func (f *demoFlags) arrayDesc() string {
	return fmt.Sprintf("%s %s, chunks %s -> %s", f.dtype, f.shape, f.oldChunks, f.newChunks)
}

// arrayConfig builds the array demo from the flags.
func (f *demoFlags) arrayConfig() (job.ArrayConfig, error) {
	shape, err := job.ParseShape(f.shape, len(strings.Split(f.shape, ",")))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--shape: %w", err)
	}
	old, err := job.ParseShape(f.oldChunks, len(shape))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--old-chunks: %w", err)
	}
	new, err := job.ParseShape(f.newChunks, len(shape))
	if err != nil {
		return job.ArrayConfig{}, fmt.Errorf("--new-chunks: %w", err)
	}
	return job.ArrayConfig{ID: fmt.Sprintf("array-demo-%d", time.Now().UnixNano()), DType: f.dtype,
		Old: job.RegularChunks(shape, old), New: job.RegularChunks(shape, new), Parallel: f.parallel, PutBatch: f.putBatch}, nil
}

// demoConfig is the dataframe demo of the flags.
func (f *demoFlags) demoConfig(prog job.Progress) job.DemoConfig {
	return job.DemoConfig{
		ID: fmt.Sprintf("demo-%d", time.Now().UnixNano()), Rows: f.rows(), Tasks: f.tasks,
		Partitions: f.partitions, PayloadBytes: f.payload, Seed: f.seed, Rule: f.rule, Progress: prog,
		Parallel: f.parallel, PutBatch: f.putBatch,
	}
}

// clusterConfig is the cluster of the demo flags.
func (f *demoFlags) clusterConfig(stderr io.Writer) job.ClusterConfig {
	return clusterConfig(job.ClusterConfig{Addr: f.cluster, Nodes: f.nodes, MemoryLimit: int64(f.memLimit),
		DataDir: f.dataDir, ProbeInterval: f.probeInterval, ProbeTimeout: f.probeTimeout, SuspicionMult: f.suspicionMult}, f.logLevel, stderr)
}
