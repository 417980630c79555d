package job

// Helpers shared by the merge and set-index jobs: one shuffled Parquet
// input, writing an output partition, and a pool of partition workers.

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

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
	in.spec = &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: len(in.inputs.Files), Partitions: partitions, Rows: in.inputs.Rows,
		Schema: codec.SchemaBytes(), Rule: rule, OwnershipSeed: seed, CoPartition: coPartition}
	if _, err := in.spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	return nil
}

// run shuffles the input on cluster cl.
func (in *dfInput) run(ctx context.Context, f ShuffleConfig, cl *Cluster, prog Progress) (*client.Result, error) {
	job := client.Job{Spec: in.spec, Nodes: cl.Addrs, Parallel: putParallel(f, cl), Auth: f.Cluster.Auth,
		Input:    func(t int) ([]arrow.Record, error) { return in.readTask(ctx, t, f.BatchRows) },
		Progress: func(done, total int) { prog(in.name, done, total) }}
	if err := f.nodeInput(&job, in.inputs, in.counter.setPut); err != nil {
		return nil, err
	}
	return client.Run(ctx, job)
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

// WritePartFile writes a Parquet file of schema at path with the records
// that fill hands to its write function (which does not keep them), and
// returns the rows and the file's size. A failed fill leaves no file.
func WritePartFile(path string, schema *arrow.Schema, cfg parquetio.WriteConfig, fill func(write func(arrow.Record) error) error) (int64, int64, error) {
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

// putParallel is how many input files are put at once: --parallel when
// given; else, on a running cluster, 0 (the client's 2 per node), and on an
// in-process cluster, whose nodes share this machine's cores, at most 2 per
// core as well. More puts at once than that keep no core busier, and each
// holds its file's batches and its send buffers: a set-index of 16 files of
// 1M rows (4 nodes, 2 cores) faulted in 264-315K pages with 4 puts at once
// against 332-383K with 8, and took 3.27-3.72 s against 3.63-4.08 s; a
// merge of 16 and 4 such files 190-210K against 269-315K.
func putParallel(f ShuffleConfig, cl *Cluster) int {
	if f.Parallel > 0 || !cl.Embedded {
		return f.Parallel
	}
	return min(2*len(cl.Addrs), 2*runtime.GOMAXPROCS(0))
}

// jobParallel is the number of partitions processed at once.
func jobParallel(f ShuffleConfig, nodes int) int {
	if f.Parallel > 0 {
		return f.Parallel
	}
	return 2 * nodes
}
