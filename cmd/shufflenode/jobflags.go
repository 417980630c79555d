package main

// Flags of the Parquet jobs (shuffle, merge, set-index): their registration,
// the checks of the flags on their own, and the exit codes of their errors.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shuffleFlags are the flags of the shuffle command and the part merge and
// set-index share with it.
type shuffleFlags struct {
	job.ShuffleConfig
	logLevel   string
	cpuProfile string
	auth       clientAuthFlags
}

func (f *shuffleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Input, "input", "", "Parquet input files, a glob pattern such as 'DIR/*.parquet' (one input task per file)")
	fs.StringVar(&f.On, "on", "", "key column(s) to partition on, comma separated")
	fs.StringVar(&f.Divisions, "divisions", "", "range partitioning on one --on column: JSON list of P-1 ascending boundaries, e.g. '[100,200]'")
	registerJobFlags(fs, f)
	registerWriteOn(fs, f)
}

// registerJobFlags registers the flags shuffle, merge and set-index share:
// the cluster, the output and how it is written.
func registerJobFlags(fs *flag.FlagSet, f *shuffleFlags) {
	f.Cluster.MemoryLimit = 1 << 30
	fs.IntVar(&f.Partitions, "partitions", 0, "output partitions (one output file each)")
	fs.StringVar(&f.Output, "output", "", "directory for the output files part-00000.parquet ...")
	fs.StringVar(&f.Cluster.Addr, "cluster", "", "API address of a running node (default: run an in-process cluster)")
	fs.IntVar(&f.Cluster.Nodes, "nodes", 4, "nodes in the in-process cluster")
	fs.Var((*byteSize)(&f.Cluster.MemoryLimit), "memory-limit", "memory budget per in-process node (send buffers + in-memory spill store)")
	fs.StringVar(&f.Cluster.DataDir, "data-dir", "", "directory for the in-process nodes' identities and spill files (default: a temporary directory)")
	fs.StringVar(&f.ID, "id", "", "job ID, the prefix of its shuffle IDs (default: <command>-<time>)")
	fs.IntVar(&f.Parallel, "parallel", 0, "input files put and output partitions processed at once (default 2 per node; an in-process cluster puts at most 2 files per core at once)")
	fs.Int64Var(&f.BatchRows, "batch-rows", parquetio.DefaultBatchRows, "rows per record batch read from an input file")
	fs.StringVar(&f.Compression, "compression", "auto", "compression of the output files: auto (per column, from a sample of each file's first batch: delta encoding for integers where it beats snappy, else snappy where it shrinks the sample by at least 1/8; no dictionary for columns of mostly distinct values), snappy, zstd or none")
	fs.BoolVar(&f.NoDictionary, "no-dictionary", false, "write the output without dictionary encoding")
	fs.BoolVar(&f.Overwrite, "overwrite", false, "remove part-*.parquet files already in --output")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with an in-process cluster: every node) to this file")
	f.auth.register(fs)
}

// registerWriteOn registers --write-on and --read-on (shuffle, merge,
// set-index).
func registerWriteOn(fs *flag.FlagSet, f *shuffleFlags) {
	fs.StringVar(&f.WriteOn, "write-on", job.WriteAuto, "who writes the output files: nodes (each partition's file by the node that owns, joins or sorts it; --output must be the same directory there, under a serve --output-root), client (this process), or auto (nodes while they can, else client)")
	fs.StringVar(&f.ReadOn, "read-on", job.ReadAuto, "who reads the input files: nodes (each input file by the node its put goes to; the files must be at the same paths there, under a serve --input-root), client (this process), or auto (nodes while they can, else client)")
}

// resolveAuth sets the running cluster's API TLS settings and token from
// the flags and the environment (nothing for an in-process cluster).
func (f *shuffleFlags) resolveAuth() error { return f.auth.resolve(&f.Cluster) }

// config completes the job's config after parsing: logger and progress
// on stderr.
func (f *shuffleFlags) config(stderr io.Writer) job.ShuffleConfig {
	c := f.ShuffleConfig
	c.Cluster = clusterConfig(c.Cluster, f.logLevel, stderr)
	c.Progress = job.NewProgress(stderr)
	return c
}

// shuffleCheckFlags checks the flags on their own.
func shuffleCheckFlags(f shuffleFlags, set map[string]bool) error {
	switch {
	case f.Input == "":
		return errors.New("--input is required (e.g. --input 'data/*.parquet')")
	case f.On == "":
		return errors.New("--on is required (key columns, comma separated)")
	case f.Output == "":
		return errors.New("--output is required (a directory)")
	case f.Partitions <= 0 && f.Divisions == "":
		return errors.New("--partitions must be at least 1")
	case f.Cluster.Nodes < 1:
		return errors.New("--nodes must be at least 1")
	case f.Parallel < 0 || f.BatchRows < 1:
		return errors.New("--parallel must be >= 0 and --batch-rows >= 1")
	}
	if f.Cluster.Addr != "" {
		for _, name := range []string{"nodes", "memory-limit", "data-dir"} {
			if set[name] {
				return fmt.Errorf("--%s applies to the in-process cluster only, not with --cluster", name)
			}
		}
		return nil
	}
	for _, name := range clientAuthNames {
		if set[name] {
			return fmt.Errorf("--%s applies to a running cluster (--cluster) only", name)
		}
	}
	return nil
}

// jobCheckFlags checks the shared flags on their own.
func jobCheckFlags(f shuffleFlags, set map[string]bool) error {
	f.Input, f.On = "-", "-" // checked by the command itself
	if set["divisions"] {
		f.Divisions = "-"
	}
	return shuffleCheckFlags(f, set)
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// jobFail prints err on one line and returns code.
func jobFail(stderr io.Writer, cmd string, code int, err error) int {
	fmt.Fprintf(stderr, "shufflenode %s: %s\n", cmd, strings.Join(strings.Fields(err.Error()), " "))
	return code
}

// shuffleExitCode is 2 for errors caused by the input data, 1 otherwise.
func shuffleExitCode(err error) int {
	if errors.Is(err, parquetio.ErrRead) || errors.Is(err, parquetio.ErrSchemaMismatch) ||
		errors.Is(err, table.ErrSchemaMismatch) || errors.Is(err, table.ErrBadPartition) ||
		status.Code(err) == codes.InvalidArgument {
		return 2
	}
	return 1
}

// jobExitCode is 2 for errors caused by the input data or the flags, 1
// otherwise.
func jobExitCode(err error) int {
	for _, e := range []error{dfops.ErrKeyType, dfops.ErrColumn, dfops.ErrSpec, dfops.ErrEmptySample,
		dfops.ErrUnsupportedType, parquetio.ErrNoFiles, parquetio.ErrUnsupportedType, table.ErrBadRule,
		table.ErrUnsupportedType, spec.ErrInvalid} {
		if errors.Is(err, e) {
			return 2
		}
	}
	return shuffleExitCode(err)
}
