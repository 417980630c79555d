package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/job"
)

// Sizes of the merge and set-index benchmarks. The targets are
// -dfbench.left=16000000 -dfbench.right=4000000 -dfbench.rows=16000000
// -dfbench.partitions=1000; the defaults are small so that -bench runs in
// about a minute.
var (
	benchLeftRows   = flag.Int("dfbench.left", 1_000_000, "left rows of BenchmarkMerge")
	benchRightRows  = flag.Int("dfbench.right", 250_000, "right rows of BenchmarkMerge")
	benchSortRows   = flag.Int("dfbench.rows", 1_000_000, "rows of BenchmarkSetIndex")
	benchPartitions = flag.Int("dfbench.partitions", 1000, "output partitions of both benchmarks")
	benchFiles      = flag.Int("dfbench.files", 16, "input files per side")
)

// writeBenchFiles writes the generated input of a benchmark.
func writeBenchFiles(b *testing.B, c job.GenParquetConfig) {
	if err := job.GenParquet(c); err != nil {
		b.Fatal(err)
	}
}

func skewOf(on bool) float64 {
	if on {
		return 0.3
	}
	return 0
}

// benchArrowBytes is the Arrow size of the generated rows: 24 bytes, plus
// 8 bytes of tag and a 4-byte offset with tag.
func benchArrowBytes(rows int, tag bool) int64 {
	if tag {
		return int64(rows) * 36
	}
	return int64(rows) * 24
}

// BenchmarkMerge merges left rows (keys uniform over the right keys, or
// with 30% of them on one key) with right rows (unique keys) on a 4-node
// in-process cluster: an inner join with as many rows as the left side.
func BenchmarkMerge(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	nl, nr := *benchLeftRows, *benchRightRows
	right := b.TempDir()
	writeBenchFiles(b, job.GenParquetConfig{Dir: right, Rows: nr, Files: max(1, *benchFiles/4), KeyType: "int64", Tag: true, Seed: 2})
	for _, skew := range []bool{false, true} {
		b.Run(fmt.Sprintf("%dx%d/skew=%v", nl, nr, skew), func(b *testing.B) {
			left := b.TempDir()
			writeBenchFiles(b, job.GenParquetConfig{Dir: left, Rows: nl, Files: *benchFiles, KeyType: "int64",
				Cardinality: int64(nr), Skew: skewOf(skew), Seed: 1})
			b.SetBytes(benchArrowBytes(nl, false) + benchArrowBytes(nr, true))
			benchCmd(b, cmdMerge, int64(nl), "--left", filepath.Join(left, "*.parquet"), "--right", filepath.Join(right, "*.parquet"),
				"--on", "key", "--how", "inner", "--partitions", fmt.Sprint(*benchPartitions), "--output", b.TempDir(),
				"--overwrite", "--nodes", "4", "--no-dictionary")
		})
	}
}

// BenchmarkSetIndex sorts rows (uniform random keys, or 30% on one key) by
// key into 1000 partitions on a 4-node in-process cluster.
func BenchmarkSetIndex(b *testing.B) {
	if testing.Short() {
		b.Skip("large benchmark")
	}
	n := *benchSortRows
	for _, skew := range []bool{false, true} {
		b.Run(fmt.Sprintf("%d/skew=%v", n, skew), func(b *testing.B) {
			in := b.TempDir()
			writeBenchFiles(b, job.GenParquetConfig{Dir: in, Rows: n, Files: *benchFiles, KeyType: "int64",
				Cardinality: 1 << 40, Skew: skewOf(skew), Tag: true, Seed: 3})
			b.SetBytes(benchArrowBytes(n, true))
			benchCmd(b, cmdSetIndex, int64(n), "--input", filepath.Join(in, "*.parquet"), "--column", "key",
				"--partitions", fmt.Sprint(*benchPartitions), "--output", b.TempDir(), "--overwrite", "--nodes", "4", "--no-dictionary")
		})
	}
}

// benchCmd runs a command b.N times and reports rows/s and the peak RSS of
// the last run (the command resets VmHWM when it starts).
func benchCmd(b *testing.B, cmd func([]string, io.Writer, io.Writer) int, rows int64, args ...string) {
	b.ReportAllocs()
	var stdout string
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		var code int
		var stderr string
		if code, stdout, stderr = runCmd(cmd, args...); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
		b.ReportMetric(float64(job.PeakRSS())/(1<<20), "peakRSS-MiB")
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.Log("\n" + shortLines(stdout, 200))
}

// shortLines cuts every line of s to at most n bytes.
func shortLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if len(l) > n {
			lines[i] = l[:n] + "..."
		}
	}
	return strings.Join(lines, "\n")
}
