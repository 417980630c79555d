package main

// Helpers shared by the merge and set-index commands: the flags they share
// with shuffle, one shuffled Parquet input, reading an output partition
// whole, and a pool of partition workers.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// registerJobFlags registers the flags shuffle, merge and set-index share:
// the cluster, the output and how it is written.
func registerJobFlags(fs *flag.FlagSet, f *shuffleFlags) {
	f.memLimit = 1 << 30
	fs.IntVar(&f.partitions, "partitions", 0, "output partitions (one output file each)")
	fs.StringVar(&f.output, "output", "", "directory for the output files part-00000.parquet ...")
	fs.StringVar(&f.cluster, "cluster", "", "API address of a running node (default: run an in-process cluster)")
	fs.IntVar(&f.nodes, "nodes", 4, "nodes in the in-process cluster")
	fs.Var(&f.memLimit, "memory-limit", "memory budget per in-process node (send buffers + in-memory spill store)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory for the in-process nodes' identities and spill files (default: a temporary directory)")
	fs.StringVar(&f.id, "id", "", "job ID, the prefix of its shuffle IDs (default: <command>-<time>)")
	fs.IntVar(&f.parallel, "parallel", 0, "input files put and output partitions processed at once (default 2 per node)")
	fs.Int64Var(&f.batchRows, "batch-rows", parquetio.DefaultBatchRows, "rows per record batch read from an input file")
	fs.StringVar(&f.compression, "compression", "snappy", "compression of the output files: snappy, zstd or none")
	fs.BoolVar(&f.noDictionary, "no-dictionary", false, "write the output without dictionary encoding")
	fs.BoolVar(&f.overwrite, "overwrite", false, "remove part-*.parquet files already in --output")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
}

// jobCheckFlags checks the shared flags on their own.
func jobCheckFlags(f shuffleFlags, set map[string]bool) error {
	f.input, f.on = "-", "-" // checked by the command itself
	if set["divisions"] {
		f.divisions = "-"
	}
	return shuffleCheckFlags(f, set)
}

// jobFail prints err on one line and returns code.
func jobFail(stderr io.Writer, cmd string, code int, err error) int {
	fmt.Fprintf(stderr, "shufflenode %s: %s\n", cmd, strings.Join(strings.Fields(err.Error()), " "))
	return code
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

// jobID returns id, or prefix-<time> when it is empty.
func jobID(id, prefix string) string {
	if id != "" {
		return id
	}
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

// dfInput is one set of Parquet files shuffled as one dataframe: one input
// task per file, read and (for merge keys) cast to the shuffle's schema.
type dfInput struct {
	name    string // for messages: "left", "right", "input"
	inputs  parquetio.Inputs
	schema  *arrow.Schema // the shuffle's schema
	spec    *spec.Spec
	counter *shuffleCounter
}

// newDFInput globs and checks the files of pattern.
func newDFInput(name, flagName, pattern string) (*dfInput, error) {
	if pattern == "" {
		return nil, fmt.Errorf("--%s is required (e.g. --%s 'data/*.parquet')", flagName, flagName)
	}
	files, err := parquetio.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	in, err := parquetio.CheckInputs(files)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	return &dfInput{name: name, inputs: in, schema: in.Schema, counter: newShuffleCounter(len(files))}, nil
}

// makeSpec sets the input's shuffle spec; seed, when set, is the ownership
// seed shared with other shuffles, and coPartition, when set, the ID of the
// shuffle whose ownership this one shares (spec.Spec.CoPartition).
func (in *dfInput) makeSpec(id, seed, coPartition string, partitions int, rule table.Rule) error {
	codec, err := table.NewCodec(in.schema, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	in.spec = &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: len(in.inputs.Files), Partitions: partitions,
		Schema: codec.SchemaBytes(), Rule: rule, OwnershipSeed: seed, CoPartition: coPartition}
	if _, err := in.spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	return nil
}

// run shuffles the input on the cluster at addrs.
func (in *dfInput) run(ctx context.Context, f shuffleFlags, addrs []string, prog func(string, int, int)) (*client.Result, error) {
	return client.Run(ctx, client.Job{Spec: in.spec, Nodes: addrs, Parallel: f.parallel,
		Input:    func(t int) ([]arrow.Record, error) { return in.readTask(ctx, t, f.batchRows) },
		Progress: func(done, total int) { prog(in.name, done, total) }})
}

// readTask reads input task t (file t) as records of the shuffle's schema,
// casting the columns whose type differs (merge keys).
func (in *dfInput) readTask(ctx context.Context, t int, batchRows int64) ([]arrow.Record, error) {
	path := in.inputs.Files[t]
	recs, err := parquetio.ReadFile(ctx, path, memory.DefaultAllocator, batchRows)
	if err != nil {
		return nil, err
	}
	for i, r := range recs {
		if err := table.CheckSchema(in.inputs.Schema, r.Schema()); err != nil {
			shuffleRelease(recs)
			return nil, fmt.Errorf("%w: %s: %w", parquetio.ErrSchemaMismatch, path, err)
		}
		cast, err := dfops.CastRecord(memory.DefaultAllocator, r, in.schema)
		if err != nil {
			shuffleRelease(recs)
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Release()
		recs[i] = cast
	}
	in.counter.set(t, recs)
	return recs, nil
}

// writePartFile writes a Parquet file of schema at path with the records
// that fill hands to its write function (which does not keep them), and
// returns the rows and the file's size. A failed fill leaves no file.
func writePartFile(path string, schema *arrow.Schema, cfg parquetio.WriteConfig, fill func(write func(arrow.Record) error) error) (int64, int64, error) {
	w, err := parquetio.Create(path, schema, cfg)
	if err != nil {
		return 0, 0, err
	}
	if err := fill(w.Write); err != nil {
		w.Abort()
		return 0, 0, err
	}
	rows := w.Rows()
	if err := w.Commit(); err != nil {
		return 0, 0, err
	}
	return rows, fileSize(path), nil
}

// forEachPartition runs work on partitions 0..n-1, par at a time, and
// stops at the first error (returned).
func forEachPartition(ctx context.Context, n, par int, work func(ctx context.Context, part int) error, prog func(int)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var done atomic.Int64
	parts := make(chan int)
	var wg sync.WaitGroup
	for range max(par, 1) {
		wg.Go(func() {
			for part := range parts {
				if err := work(ctx, part); err != nil {
					cancel(err)
					continue
				}
				prog(int(done.Add(1)))
			}
		})
	}
	shuffleFeed(ctx, parts, n)
	wg.Wait()
	return context.Cause(ctx)
}

// jobParallel is the number of partitions processed at once.
func jobParallel(f shuffleFlags, nodes int) int {
	if f.parallel > 0 {
		return f.parallel
	}
	return 2 * nodes
}
