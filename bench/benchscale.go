package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/table"
)

// scaleCase is one row of bench scale: a demo shape and the share of the
// reference case's MB/s it aims at (0: it must work, no share).
type scaleCase struct {
	tasks, partitions int
	rows              int64 // 0: the run's rows
	goal              float64
}

// scaleCases are bench scale's rows; the first is the reference.
func scaleCases(rows int64, payload int) []scaleCase {
	small := int64(100<<20) / genRowBytesOf(payload)
	return []scaleCase{
		{1000, 1000, 0, 1},
		{10_000, 10_000, 0, 0.8},
		{100_000, 1000, 0, 0.6},
		{1000, 100_000, 0, 0.5},
		{100_000, 100_000, min(rows, small), 0},
	}
}

// BenchScale runs the dataframe demo c (its Rows and PayloadBytes; Tasks
// and Partitions are the cases') on fresh clusters at 1,000 x 1,000, then
// at 10,000 x 10,000, 100,000 x 1,000, 1,000 x 100,000 and 100,000 x
// 100,000 (at most 100 MiB of rows), each repeat times, and writes per
// case the median seconds and MB/s, the ratio of that MB/s to the 1,000 x
// 1,000 case's measured in the same run, and the goal for it (bench
// scale). Every run verifies every row, as the demo does.
func BenchScale(ctx context.Context, w io.Writer, cc job.ClusterConfig, c job.DemoConfig, repeat int) error {
	fmt.Fprintf(w, "%-24s %9s %9s %8s %7s %6s %9s\n", "tasks x partitions", "put+bar s", "read s", "MB/s", "ratio", "goal", "peak RSS")
	var ref float64
	for _, k := range scaleCases(c.Rows, c.PayloadBytes) {
		rep, rss, err := benchScaleCase(ctx, cc, c, k, max(1, repeat))
		if err != nil {
			return fmt.Errorf("bench scale %d x %d: %w", k.tasks, k.partitions, err)
		}
		if ref == 0 {
			ref = rep.MBps()
		}
		goal := "works"
		if k.goal > 0 {
			goal = fmt.Sprintf(">=%.1f", k.goal)
		}
		fmt.Fprintf(w, "%-24s %9.2f %9.2f %8.1f %7.2f %6s %9s\n", fmt.Sprintf("%d x %d", k.tasks, k.partitions),
			rep.ShuffleSeconds, rep.ReadSeconds, rep.MBps(), rep.MBps()/ref, goal, job.FormatBytes(rss))
	}
	return nil
}

// benchScaleCase runs one case repeat times and returns the run of median
// MB/s and the highest peak RSS of this process (an in-process cluster's
// nodes; the client alone against --cluster).
func benchScaleCase(ctx context.Context, cc job.ClusterConfig, c job.DemoConfig, k scaleCase, repeat int) (job.Report, int64, error) {
	var reps []job.Report
	var rss int64
	for range repeat {
		runtime.GC()
		measure.ResetPeakRSS()
		run := c
		run.Tasks, run.Partitions, run.ID = k.tasks, k.partitions, fmt.Sprintf("scale-%d", time.Now().UnixNano())
		if k.rows > 0 {
			run.Rows = k.rows
		}
		rep, err := job.RunDemoOn(ctx, cc, run)
		if err != nil {
			return job.Report{}, 0, err
		}
		reps, rss = append(reps, rep.Report), max(rss, measure.PeakRSS())
	}
	slices.SortFunc(reps, func(a, b job.Report) int { return int(a.MBps()*1e6 - b.MBps()*1e6) })
	return reps[len(reps)/2], rss, nil
}

// genRowBytesOf is the bytes of one generated row with payload bytes of
// name.
func genRowBytesOf(payload int) int64 {
	return table.GenRowBytes(table.GenConfig{PayloadBytes: payload})
}

// arrayScaleCase is an array row of bench scale: a (rows, cols) array
// rechunked from row slabs of slab rows to column slabs of slab columns,
// and the share of the reference case's MB/s it aims at.
type arrayScaleCase struct {
	slab int64
	goal float64
}

// arrayScaleCases are bench scale's array rows; the first is the reference:
// at (10000, 10000), 1,000 x 1,000 chunks of 800 B pieces, then 10,000 x
// 10,000 chunks of one element each (10^8 pieces).
func arrayScaleCases() []arrayScaleCase {
	return []arrayScaleCase{{10, 1}, {1, 0.5}}
}

// ArrayScaleConfig is the array part of bench scale.
type ArrayScaleConfig struct {
	// Rows and Cols are the array's shape (default 10000 x 10000).
	Rows, Cols int64
	// DType is the element type (default "<f8").
	DType string
	// Parallel is the old chunks put at once (0: the client's default).
	Parallel int
}

func (c ArrayScaleConfig) withDefaults() ArrayScaleConfig {
	if c.Rows <= 0 {
		c.Rows = 10000
	}
	if c.Cols <= 0 {
		c.Cols = 10000
	}
	if c.DType == "" {
		c.DType = "<f8"
	}
	return c
}

// BenchScaleArray runs the array rechunk of c on fresh clusters from (10,
// cols) to (rows, 10) chunks, then from (1, cols) to (rows, 1), each repeat
// times, and writes per case the median seconds and MB/s, the ratio of that
// MB/s to the first case's measured in the same run, and the goal for it
// (bench scale). Every run checks every element of every new chunk, as the
// array demo does.
func BenchScaleArray(ctx context.Context, w io.Writer, cc job.ClusterConfig, c ArrayScaleConfig, repeat int) error {
	c = c.withDefaults()
	fmt.Fprintf(w, "%-40s %9s %9s %8s %7s %6s %9s\n", "array old -> new chunks", "put+bar s", "read s", "MB/s", "ratio", "goal", "peak RSS")
	var ref float64
	for _, k := range arrayScaleCases() {
		rep, rss, err := benchScaleArrayCase(ctx, cc, c, k, max(1, repeat))
		if err != nil {
			return fmt.Errorf("bench scale array slab %d: %w", k.slab, err)
		}
		if ref == 0 {
			ref = rep.MBps()
		}
		label := fmt.Sprintf("%s (%d,%d) (%d,%d)->(%d,%d)", c.DType, c.Rows, c.Cols, min(k.slab, c.Rows), c.Cols, c.Rows, min(k.slab, c.Cols))
		fmt.Fprintf(w, "%-40s %9.2f %9.2f %8.1f %7.2f %6s %9s\n", label,
			rep.ShuffleSeconds, rep.ReadSeconds, rep.MBps(), rep.MBps()/ref, fmt.Sprintf(">=%.1f", k.goal), job.FormatBytes(rss))
	}
	return nil
}

// benchScaleArrayCase runs one array case repeat times and returns the run
// of median MB/s and the highest peak RSS of this process.
func benchScaleArrayCase(ctx context.Context, cc job.ClusterConfig, c ArrayScaleConfig, k arrayScaleCase, repeat int) (job.ArrayReport, int64, error) {
	shape := []int64{c.Rows, c.Cols}
	var reps []job.ArrayReport
	var rss int64
	for range repeat {
		runtime.GC()
		measure.ResetPeakRSS()
		run := job.ArrayConfig{ID: fmt.Sprintf("scale-array-%d", time.Now().UnixNano()), DType: c.DType, Parallel: c.Parallel,
			Old: job.RegularChunks(shape, []int64{min(k.slab, c.Rows), c.Cols}), New: job.RegularChunks(shape, []int64{c.Rows, min(k.slab, c.Cols)})}
		rep, err := job.RunArrayDemoOn(ctx, cc, run, "")
		if err != nil {
			return job.ArrayReport{}, 0, err
		}
		reps, rss = append(reps, rep.ArrayReport), max(rss, measure.PeakRSS())
	}
	slices.SortFunc(reps, func(a, b job.ArrayReport) int { return cmp.Compare(a.MBps(), b.MBps()) })
	return reps[len(reps)/2], rss, nil
}
