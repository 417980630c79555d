package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shufflenode/shufflenode/job"
)

// redistributeFlags are the flags of redistribute.
type redistributeFlags struct {
	cfg        job.RedistributeConfig
	logLevel   string
	cpuProfile string
	auth       clientAuthFlags
}

func (f *redistributeFlags) register(fs *flag.FlagSet) {
	f.cfg.Cluster.MemoryLimit = 1 << 30
	fs.StringVar(&f.cfg.Input, "input", "", "input directory: proc-<rank>.npy and proc-<rank>.json (DAP dim_data) per process")
	fs.StringVar(&f.cfg.Output, "output", "", "output directory (created), in the same form")
	fs.StringVar(&f.cfg.To, "to", "", `target: {"proc_grid": [2, 2], "axes": [{"dist_type": "c", "block_size": 64}, {"dist_type": "b", "padding": 1}]} or {"chunks": [500, 2000]}`)
	fs.StringVar(&f.cfg.ID, "id", "", "shuffle ID (default: redistribute-<time>)")
	fs.StringVar(&f.cfg.Cluster.Addr, "cluster", "", "API address of a running cluster (default: an in-process cluster)")
	fs.IntVar(&f.cfg.Cluster.Nodes, "nodes", 4, "nodes of the in-process cluster")
	fs.IntVar(&f.cfg.Parallel, "parallel", 0, "local arrays read/put and written at once (default 2 per node)")
	fs.Var((*byteSize)(&f.cfg.Cluster.MemoryLimit), "memory-limit", "memory budget per in-process node")
	fs.StringVar(&f.cfg.Cluster.DataDir, "data-dir", "", "in-process nodes' data directory (default: temporary)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with an in-process cluster: every node) to this file")
	f.auth.register(fs)
}

// cmdRedistribute redistributes a DAP distributed array (job.PlanRedistribute).
func cmdRedistribute(args []string, stdout, stderr io.Writer) int {
	var f redistributeFlags
	fs := newFlags("redistribute", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := f.auth.resolve(&f.cfg.Cluster); err != nil {
		fmt.Fprintf(stderr, "shufflenode redistribute: %v\n", err)
		return 2
	}
	f.cfg.Cluster = clusterConfig(f.cfg.Cluster, f.logLevel, os.Stderr)
	f.cfg.Progress = job.NewProgress(stderr)
	plan, err := job.PlanRedistribute(f.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode redistribute: %v\n", err)
		return 2
	}
	return runJob(stdout, f.cpuProfile, func(err error) int {
		fmt.Fprintf(stderr, "shufflenode redistribute: %v\n", err)
		return 1
	}, func(ctx context.Context) (printer, error) { return plan.Run(ctx) })
}

// cmdGenDAP writes a synthetic DAP distributed array (job.GenDAP).
func cmdGenDAP(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("gen-dap", stderr)
	out := fs.String("output", "", "directory for proc-<rank>.npy and proc-<rank>.json")
	shapeF := fs.String("shape", "1000,1000", "shape")
	to := fs.String("dist", `{"proc_grid": [2, 2], "axes": [{"dist_type": "c", "block_size": 32}, {"dist_type": "c", "block_size": 32}]}`, "distribution, as redistribute's --to")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	shape, err := job.ParseShape(*shapeF, len(strings.Split(*shapeF, ",")))
	if err == nil && *out == "" {
		err = fmt.Errorf("--output is required")
	}
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode gen-dap: %v\n", err)
		return 2
	}
	d, err := job.GenDAP(*out, shape, *to)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode gen-dap: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: <f8 %v over %d processes (grid %v)\n", *out, shape, d.NumProcs(), d.Grid)
	return 0
}
