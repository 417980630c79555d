package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/synth"
)

// benchSkew is the fraction of rows on one key in the skewed merge and
// set-index runs.
const benchSkew = 0.3

// jobRuns lists the runs of one bench job: merge and set-index run with
// uniform keys and with benchSkew of the rows on one key.
func (b *bench) jobRuns(name string) []func(context.Context) (benchRow, error) {
	switch name {
	case "demo":
		return []func(context.Context) (benchRow, error){func(ctx context.Context) (benchRow, error) {
			return b.demo(ctx, name, b.scaled(500<<20)/128, 100)
		}}
	case "rows":
		return []func(context.Context) (benchRow, error){func(ctx context.Context) (benchRow, error) {
			return b.demo(ctx, name, b.scaled(16_000_000), 4)
		}}
	case "array":
		return []func(context.Context) (benchRow, error){b.array}
	case "redistribute":
		return []func(context.Context) (benchRow, error){b.redistribute}
	}
	run := b.merge
	if name == "setindex" {
		run = b.setIndex
	}
	return []func(context.Context) (benchRow, error){
		func(ctx context.Context) (benchRow, error) { return run(ctx, 0) },
		func(ctx context.Context) (benchRow, error) { return run(ctx, benchSkew) },
	}
}

// demo runs the dataframe demo: rows of 28+payload bytes (payload 100:
// the 500 MiB demo; payload 4: 32 B rows of int64 key, int64 id and 12 B
// of value and name).
func (b *bench) demo(ctx context.Context, name string, rows int64, payload int) (benchRow, error) {
	p := b.parts()
	rep, err := job.RunDemoOn(ctx, b.cfg.Cluster, job.DemoConfig{ID: fmt.Sprintf("bench-%s-%d", name, time.Now().UnixNano()),
		Rows: rows, Tasks: p, Partitions: p, PayloadBytes: payload, Seed: 1})
	if err != nil {
		return benchRow{}, err
	}
	label := fmt.Sprintf("%s %dx%d B %d->%d", name, rows, 28+payload, p, p)
	if name == "demo" {
		label = fmt.Sprintf("demo %s %d->%d", job.FormatBytes(rep.Bytes), p, p)
	}
	return benchRow{name: label, bytes: rep.Bytes, put: rep.ShuffleSeconds, read: rep.ReadSeconds}, nil
}

// array rechunks a square f8 array (10000x10000 at scale 1) from row
// slabs to column slabs, as many chunks each way as the other jobs have tasks.
func (b *bench) array(ctx context.Context) (benchRow, error) {
	side := max(4, int64(math.Round(10000*math.Sqrt(b.cfg.Scale))))
	slab := max(1, side/int64(b.parts()))
	shape := []int64{side, side}
	cfg := job.ArrayConfig{ID: fmt.Sprintf("bench-array-%d", time.Now().UnixNano()), DType: "<f8",
		Old: job.RegularChunks(shape, []int64{slab, side}), New: job.RegularChunks(shape, []int64{side, slab})}
	rep, err := job.RunArrayDemoOn(ctx, b.cfg.Cluster, cfg, "")
	if err != nil {
		return benchRow{}, err
	}
	label := fmt.Sprintf("array f8 (%d,%d) (%d,%d)->(%d,%d)", side, side, slab, side, side, slab)
	return benchRow{name: label, bytes: rep.Bytes, put: rep.ShuffleSeconds, read: rep.ReadSeconds}, nil
}

// merge joins generated left rows (keys uniform over the right's, skew of
// them on key 0) with unique right keys: an inner join as large as the left side.
func (b *bench) merge(ctx context.Context, skew float64) (benchRow, error) {
	dir, err := os.MkdirTemp(b.cfg.TempDir, "shufflenode-bench-merge-")
	if err != nil {
		return benchRow{}, err
	}
	defer os.RemoveAll(dir)
	nl, nr := int(b.scaled(1_000_000)), int(b.scaled(250_000))
	left, right := filepath.Join(dir, "left"), filepath.Join(dir, "right")
	u0 := measure.Self()
	if err := synth.Parquet(synth.ParquetConfig{Dir: right, Rows: nr, Files: 4, KeyType: "int64", Tag: true, Seed: 2}); err != nil {
		return benchRow{}, err
	}
	if err := synth.Parquet(synth.ParquetConfig{Dir: left, Rows: nl, Files: 16, KeyType: "int64", Cardinality: int64(max(nr, 1)), Skew: skew, Seed: 1}); err != nil {
		return benchRow{}, err
	}
	prep := b.prepared(u0)
	plan, err := job.PlanMerge(job.MergeConfig{Left: filepath.Join(left, "*.parquet"), Right: filepath.Join(right, "*.parquet"),
		On: "key", How: "inner", Suffixes: "_x,_y", Job: b.parquetJob(dir)})
	if err != nil {
		return benchRow{}, err
	}
	rep, err := plan.Run(ctx)
	if err != nil {
		return benchRow{}, err
	}
	return benchRow{name: fmt.Sprintf("merge %dx%d rows %d parts skew %g", nl, nr, b.parts(), skew), bytes: rep.Phases().ArrowBytes,
		put: rep.Phases().PutSecs, read: rep.Phases().ReadSecs, prep: prep, parquet: true}, nil
}

// setIndex sorts generated rows (uniform random keys, skew of them 0) by
// key. Its put+barrier includes sampling the key column for the divisions:
// a set-index must do that before it can put a row.
func (b *bench) setIndex(ctx context.Context, skew float64) (benchRow, error) {
	dir, err := os.MkdirTemp(b.cfg.TempDir, "shufflenode-bench-setindex-")
	if err != nil {
		return benchRow{}, err
	}
	defer os.RemoveAll(dir)
	n, in := int(b.scaled(1_000_000)), filepath.Join(dir, "in")
	u0 := measure.Self()
	if err := synth.Parquet(synth.ParquetConfig{Dir: in, Rows: n, Files: 16, KeyType: "int64", Cardinality: 1 << 40, Skew: skew, Tag: true, Seed: 3}); err != nil {
		return benchRow{}, err
	}
	prep := b.prepared(u0)
	plan, err := job.PlanSetIndex(ctx, job.SetIndexConfig{Input: filepath.Join(in, "*.parquet"), Column: "key", Sample: 1000, Job: b.parquetJob(dir)})
	if err != nil {
		return benchRow{}, err
	}
	rep, err := plan.Run(ctx)
	if err != nil {
		return benchRow{}, err
	}
	return benchRow{name: fmt.Sprintf("set-index %d rows %d parts skew %g", n, b.parts(), skew), bytes: rep.Phases().ArrowBytes,
		put: rep.Phases().PutSecs, read: rep.Phases().ReadSecs, prep: prep, parquet: true}, nil
}

// parquetJob is the shared part of the merge and set-index runs: output
// under dir, no dictionary encoding, compression auto.
func (b *bench) parquetJob(dir string) job.ShuffleConfig {
	return job.ShuffleConfig{Output: filepath.Join(dir, "out"), Partitions: b.parts(), Cluster: b.cfg.Cluster,
		BatchRows: parquetio.DefaultBatchRows, Compression: string(parquetio.Auto), NoDictionary: true}
}

// prepared ends a job's preparation (making its input files, since usage
// u0): it returns the CPU time and faults that took and resets the peak
// RSS, so that none of them counts as the job's.
func (b *bench) prepared(u0 measure.Usage) measure.Usage {
	debug.FreeOSMemory() // collects first
	measure.ResetPeakRSS()
	b.hugeMark = HugeFaults()
	return measure.Self().Sub(u0)
}
