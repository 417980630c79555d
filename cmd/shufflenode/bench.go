package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/shufflenode/shufflenode/bench"
	"github.com/shufflenode/shufflenode/job"
)

func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "shuffle" || args[0] == "recovery" || args[0] == "scale") {
		return benchCases(args[0], args[1:], stdout, stderr)
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, "usage: shufflenode bench [flags] | bench shuffle|recovery|scale [demo flags]")
		return 2
	}
	return benchRecord(args, stdout, stderr)
}

// benchCases runs bench shuffle, bench recovery or bench scale (medians of
// three runs per case).
func benchCases(name string, args []string, stdout, stderr io.Writer) int {
	var f demoFlags
	fs := newFlags("bench "+name, stderr)
	f.register(fs)
	procs := 0
	if name == "recovery" {
		fs.IntVar(&procs, "processes", 0, "also drain and kill a node of this many `shufflenode serve` processes started here (0: none)")
	}
	if code, ok := parse(fs, args); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch name {
	case "recovery":
		err = bench.BenchRecovery(ctx, stdout, f.clusterConfig(stderr), f.demoConfig(nil))
		if err == nil && procs > 0 {
			err = benchDrainProcs(ctx, stdout, f, procs)
		}
	case "scale":
		err = benchScale(ctx, f, stdout, stderr)
	default:
		err = bench.BenchShuffle(ctx, stdout, f.clusterConfig(stderr), f.demoConfig(nil), int64(f.data))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	return 0
}

// benchScale runs bench scale: the dataframe cases, then the array cases
// (only the array cases with --array, on an array of --shape's first two
// sizes).
func benchScale(ctx context.Context, f demoFlags, stdout, stderr io.Writer) error {
	if !f.array {
		if err := bench.BenchScale(ctx, stdout, f.clusterConfig(stderr), f.demoConfig(nil), 3); err != nil {
			return err
		}
	}
	shape, err := job.ParseShape(f.shape, 2)
	if err != nil {
		return fmt.Errorf("--shape: %w", err)
	}
	c := bench.ArrayScaleConfig{Rows: shape[0], Cols: shape[1], DType: f.dtype, Parallel: f.parallel}
	return bench.BenchScaleArray(ctx, stdout, f.clusterConfig(stderr), c, 3)
}

// benchFlags are the flags of the benchmark of record.
type benchFlags struct {
	nodes, processes int
	cluster          bool
	memLimit         byteSize
	jobs             string
	quick            float64
	repeat           int
	logLevel         string
	cpuProfile       string
}

func (f *benchFlags) register(fs *flag.FlagSet) {
	f.memLimit = 1 << 30
	fs.IntVar(&f.nodes, "nodes", 4, "nodes of the in-process cluster (and serve processes with --cluster)")
	fs.IntVar(&f.processes, "processes", 0, "run the jobs on this many `shufflenode serve` processes started here (0: in-process)")
	fs.BoolVar(&f.cluster, "cluster", false, "run the jobs on --nodes serve processes started here (as --processes)")
	fs.Var(&f.memLimit, "memory-limit", "memory budget per node")
	fs.StringVar(&f.jobs, "jobs", "", "jobs to run, comma separated, of "+strings.Join(bench.BenchJobs(), ",")+
		" (default demo,rows,array; with processes demo,array)")
	fs.Float64Var(&f.quick, "quick", 1, "scale every job's size by this factor (e.g. 0.01 for a quick run)")
	fs.IntVar(&f.repeat, "repeat", 1, "run each job this many times in a row; in-process, the runs of a job share one cluster (later runs: a long-lived node's later shuffles)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (in-process jobs: every node) to this file")
}

// config turns the flags into the bench's config.
func (f *benchFlags) config(stderr io.Writer) (bench.BenchConfig, error) {
	c := bench.BenchConfig{Scale: f.quick, Repeat: f.repeat,
		Cluster: clusterConfig(job.ClusterConfig{Nodes: f.nodes, MemoryLimit: int64(f.memLimit)}, f.logLevel, stderr)}
	if f.jobs != "" {
		c.Jobs = strings.Split(f.jobs, ",")
	}
	if f.cluster && f.processes == 0 {
		f.processes = f.nodes
	}
	if f.processes > 0 {
		bin, err := os.Executable()
		if err != nil {
			return c, err
		}
		c.Procs = bench.ProcsConfig{Binary: bin, Processes: f.processes, MemoryLimit: int64(f.memLimit), Env: serveEnv()}
		if c.Jobs == nil {
			c.Jobs = []string{"demo", "array"}
		}
	}
	return c, c.Validate()
}

// serveEnv is this process's environment without SHUFFLENODE_ variables
// (serve reads its flags from them too).
func serveEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHUFFLENODE_") })
}

// benchRecord runs the benchmark of record: ceilings, then each job.
func benchRecord(args []string, stdout, stderr io.Writer) int {
	var f benchFlags
	fs := newFlags("bench", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	cfg, err := f.config(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode bench: %v\n", err)
		return 2
	}
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "shufflenode bench: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bench.Bench(ctx, stdout, cfg); err != nil {
		fmt.Fprintf(stderr, "shufflenode bench: %v\n", err)
		return 1
	}
	return 0
}

// benchDrainProcs runs bench recovery's drain against kill on procs serve
// processes running this binary.
func benchDrainProcs(ctx context.Context, stdout io.Writer, f demoFlags, procs int) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	pc := bench.ProcsConfig{Binary: exe, Processes: procs, MemoryLimit: int64(f.memLimit)}
	return bench.BenchDrainProcs(ctx, stdout, pc, f.demoConfig(nil))
}
