package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/shufflenode/shufflenode/job"
)

// redistributeFlags are the flags of redistribute.
type redistributeFlags struct {
	cfg job.RedistributeConfig
	arrayJobFlags
}

func (f *redistributeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.Input, "input", "", "input directory: proc-<rank>.npy and proc-<rank>.json (DAP dim_data) per process")
	fs.StringVar(&f.cfg.Output, "output", "", "output directory (created), in the same form")
	fs.StringVar(&f.cfg.To, "to", "", `target: {"proc_grid": [2, 2], "axes": [{"dist_type": "c", "block_size": 64}, {"dist_type": "b", "padding": 1}]} or {"chunks": [500, 2000]}`)
	f.arrayJobFlags.register(fs, "redistribute", "local arrays", &f.cfg.Cluster, &f.cfg.ID, &f.cfg.Parallel)
}

// cmdRedistribute redistributes a DAP distributed array (job.PlanRedistribute).
func cmdRedistribute(args []string, stdout, stderr io.Writer) int {
	var f redistributeFlags
	fs := newFlags("redistribute", stderr)
	f.register(fs)
	if code, ok := f.prepare(fs, args, &f.cfg.Cluster, &f.cfg.Progress); !ok {
		return code
	}
	plan, err := job.PlanRedistribute(f.cfg)
	if err != nil {
		return f.fail(err, 2)
	}
	return runJob(stdout, f.cpuProfile, func(err error) int { return f.fail(err, 1) }, func(ctx context.Context) (printer, error) { return plan.Run(ctx) })
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
