package bench

import (
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
