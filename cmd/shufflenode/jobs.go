package main

// The job commands: flags into job configs, one shared preamble (runJob),
// and exit codes. The jobs themselves live in package job.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/synth"
	"github.com/shufflenode/shufflenode/zarr"
)

// printer is a job's report.
type printer interface{ Print(w io.Writer) }

// runJob is every job command's preamble and epilogue: a context ended by
// SIGINT, the peak RSS reset, a CPU profile to cpuProfile if set, the run,
// then the report on stdout, or fail reports the error and gives the exit
// status.
func runJob(stdout io.Writer, cpuProfile string, fail func(error) int, run func(ctx context.Context) (printer, error)) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	measure.ResetPeakRSS()
	if cpuProfile != "" {
		stopProfile, err := startCPUProfile(cpuProfile)
		if err != nil {
			return fail(err)
		}
		defer stopProfile()
	}
	rep, err := run(ctx)
	if err != nil {
		return fail(err)
	}
	rep.Print(stdout)
	return 0
}

// failWith returns a fail function for runJob: err on one line of stderr,
// the exit status from exitError or else from exitCode.
func failWith(name string, stderr io.Writer, exitCode func(error) int) func(error) int {
	return func(err error) int {
		code := exitCode(err)
		var ee exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		return jobFail(stderr, name, code, err)
	}
}

// clusterConfig completes a job's cluster from the flags: a logger on
// stderr, and the Go runtime's soft memory limit unless GOMEMLIMIT is set.
func clusterConfig(c job.ClusterConfig, logLevel string, stderr io.Writer) job.ClusterConfig {
	c.Logger = newLogger(stderr, logLevel)
	c.SetRuntimeLimit = os.Getenv("GOMEMLIMIT") == ""
	return c
}

func cmdShuffle(args []string, stdout, stderr io.Writer) int {
	var f shuffleFlags
	fs := newFlags("shuffle", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := shuffleCheckFlags(f, setFlags(fs)); err != nil {
		return jobFail(stderr, "shuffle", 2, err)
	}
	if err := f.resolveAuth(); err != nil {
		return jobFail(stderr, "shuffle", 2, err)
	}
	plan, err := job.PlanShuffle(f.config(stderr))
	if err != nil {
		return jobFail(stderr, "shuffle", 2, err)
	}
	return runJob(stdout, f.cpuProfile, failWith("shuffle", stderr, shuffleExitCode), func(ctx context.Context) (printer, error) {
		return plan.Run(ctx)
	})
}

// mergeFlags are the flags of the merge command.
type mergeFlags struct {
	cfg job.MergeConfig
	job shuffleFlags
}

func (f *mergeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.Left, "left", "", "Parquet files of the left side, a glob pattern such as 'L/*.parquet'")
	fs.StringVar(&f.cfg.Right, "right", "", "Parquet files of the right side")
	fs.StringVar(&f.cfg.On, "on", "", "key column(s) present on both sides, comma separated")
	fs.StringVar(&f.cfg.LeftOn, "left-on", "", "left key column(s), instead of --on (with --right-on)")
	fs.StringVar(&f.cfg.RightOn, "right-on", "", "right key column(s), paired with --left-on")
	fs.StringVar(&f.cfg.How, "how", "inner", "inner, left, right or outer")
	fs.StringVar(&f.cfg.Suffixes, "suffixes", "_x,_y", "suffixes of clashing non-key column names, left,right")
	registerJobFlags(fs, &f.job)
	registerWriteOn(fs, &f.job)
}

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	var f mergeFlags
	fs := newFlags("merge", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := jobCheckFlags(f.job, setFlags(fs)); err != nil {
		return jobFail(stderr, "merge", 2, err)
	}
	if err := f.job.resolveAuth(); err != nil {
		return jobFail(stderr, "merge", 2, err)
	}
	f.cfg.Job = f.job.config(stderr)
	plan, err := job.PlanMerge(f.cfg)
	if err != nil {
		return jobFail(stderr, "merge", 2, err)
	}
	return runJob(stdout, f.job.cpuProfile, failWith("merge", stderr, jobExitCode), func(ctx context.Context) (printer, error) {
		return plan.Run(ctx)
	})
}

// setIndexFlags are the flags of the set-index command.
type setIndexFlags struct {
	cfg job.SetIndexConfig
	job shuffleFlags
}

func (f *setIndexFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.Input, "input", "", "Parquet input files, a glob pattern such as 'DIR/*.parquet' (one input task per file)")
	fs.StringVar(&f.cfg.Column, "column", "", "the column to sort by (the new index)")
	fs.StringVar(&f.cfg.Divisions, "divisions", "", "JSON list of P-1 ascending boundaries, e.g. '[100,200]' (default: sampled)")
	fs.IntVar(&f.cfg.Sample, "sample", 1000, "values sampled per input file to choose divisions (raised to 20 per partition over all files)")
	registerJobFlags(fs, &f.job)
	registerWriteOn(fs, &f.job)
}

func cmdSetIndex(args []string, stdout, stderr io.Writer) int {
	var f setIndexFlags
	fs := newFlags("set-index", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	set := setFlags(fs)
	f.cfg.Job, f.cfg.PartitionsGiven = f.job.config(stderr), set["partitions"]
	return runJob(stdout, f.job.cpuProfile, failWith("set-index", stderr, jobExitCode), func(ctx context.Context) (printer, error) {
		if err := jobCheckFlags(f.job, set); err != nil {
			return nil, exitError{2, err}
		}
		if err := f.job.resolveAuth(); err != nil {
			return nil, exitError{2, err}
		}
		f.cfg.Job.Cluster.Auth = f.job.Cluster.Auth
		plan, err := job.PlanSetIndex(ctx, f.cfg)
		if err != nil {
			return nil, exitError{2, err}
		}
		return plan.Run(ctx)
	})
}

// exitError is an error with its own exit status (runJob's exitCode
// functions honour it).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// rechunkFlags are the flags of rechunk.
type rechunkFlags struct {
	cfg job.RechunkConfig
	arrayJobFlags
}

func (f *rechunkFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.Input, "input", "", "input Zarr v2 array (directory store)")
	fs.StringVar(&f.cfg.Output, "output", "", "output Zarr v2 array (created; must not exist or be empty)")
	fs.StringVar(&f.cfg.Chunks, "chunks", "", "new chunk shape, comma-separated (e.g. 1000,100)")
	f.arrayJobFlags.register(fs, "rechunk", "chunks", &f.cfg.Cluster, &f.cfg.ID, &f.cfg.Parallel)
}

func cmdRechunk(args []string, stdout, stderr io.Writer) int {
	var f rechunkFlags
	fs := newFlags("rechunk", stderr)
	f.register(fs)
	if code, ok := f.prepare(fs, args, &f.cfg.Cluster, &f.cfg.Progress); !ok {
		return code
	}
	plan, err := job.PlanRechunk(f.cfg)
	if err != nil {
		return f.fail(err, 2)
	}
	defer plan.Close()
	return runJob(stdout, f.cpuProfile, func(err error) int { return f.fail(err, 1) }, func(ctx context.Context) (printer, error) {
		return plan.Run(ctx)
	})
}

// genParquetFlags are the flags of gen-parquet.
type genParquetFlags struct{ synth.ParquetConfig }

func (c *genParquetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Dir, "output", "", "directory for the files gen-000.parquet ...")
	fs.IntVar(&c.Rows, "rows", 1_000_000, "rows in all")
	fs.IntVar(&c.Files, "files", 8, "files (the rows are split evenly)")
	fs.StringVar(&c.KeyType, "key-type", "int64", "type of the key column: int64 or int32")
	fs.Int64Var(&c.Cardinality, "keys", 0, "keys are uniform in [0, keys); 0 makes key = id (unique)")
	fs.Float64Var(&c.Skew, "skew", 0, "fraction of rows whose key is 0 (a skewed key)")
	fs.Float64Var(&c.Nulls, "nulls", 0, "fraction of rows whose key is null")
	fs.BoolVar(&c.Tag, "tag", false, "add a string column tag")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
}

func cmdGenParquet(args []string, stdout, stderr io.Writer) int {
	var c genParquetFlags
	fs := newFlags("gen-parquet", stderr)
	c.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := c.Validate(); err != nil {
		return jobFail(stderr, "gen-parquet", 2, err)
	}
	if err := synth.Parquet(c.ParquetConfig); err != nil {
		return jobFail(stderr, "gen-parquet", 1, err)
	}
	fmt.Fprintf(stdout, "wrote %d rows in %d files to %s\n", c.Rows, c.Files, c.Dir)
	return 0
}

// cmdGenZarr writes a synthetic Zarr v2 array (synth.Zarr).
func cmdGenZarr(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("gen-zarr", stderr)
	out := fs.String("output", "", "directory of the new array")
	shapeF := fs.String("shape", "1000,1000", "shape")
	chunksF := fs.String("chunks", "100,1000", "chunk shape")
	dtypeF := fs.String("dtype", "<f8", "NumPy dtype (<f8, <f4, <i8, <i4)")
	comp := fs.String("compressor", "none", "none, zlib or zstd")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	m, err := genZarrMeta(*shapeF, *chunksF, *dtypeF, *comp)
	if err == nil && *out == "" {
		err = fmt.Errorf("--output is required")
	}
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode gen-zarr: %v\n", err)
		return 2
	}
	if err := synth.Zarr(*out, m); err != nil {
		fmt.Fprintf(stderr, "shufflenode gen-zarr: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %s %v chunks %v (%s)\n", *out, m.DType, m.Shape, m.Chunks, job.FormatBytes(job.ArrayBytes(m)))
	return 0
}

// genZarrMeta parses gen-zarr's shape and chunk flags into synth.ZarrMeta.
func genZarrMeta(shapeS, chunksS, dtype, comp string) (zarr.Meta, error) {
	shape, err := job.ParseShape(shapeS, len(strings.Split(shapeS, ",")))
	if err != nil {
		return zarr.Meta{}, err
	}
	chunks, err := job.ParseShape(chunksS, len(shape))
	if err != nil {
		return zarr.Meta{}, err
	}
	return synth.ZarrMeta(shape, chunks, dtype, comp)
}

func cmdLayout(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("layout", stderr)
	addr := fs.String("node", "127.0.0.1:7947", "API address of a member")
	id := fs.String("shuffle", "", "array shuffle ID")
	var auth clientAuthFlags
	auth.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *id == "" {
		fmt.Fprintln(stderr, "shufflenode layout: --shuffle is required")
		return 2
	}
	c, err := auth.dial(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode layout: %v\n", err)
		return 1
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := c.Layout(ctx, *id)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode layout: %v\n", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(l)
	return 0
}
