package integration

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/integration/netns"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/synth"
)

// nsTimes are the seconds of nsWorkloads' three jobs.
type nsTimes struct{ demo, array, merge float64 }

// nsWorkloads runs the demo shuffle, an array rechunk and a merge on c,
// each verified exactly once, and returns their times.
func nsWorkloads(t *testing.T, c *nsCluster, label string, seed uint64) nsTimes {
	t.Helper()
	var out nsTimes
	start := time.Now()
	rep, err := runDemo(t, c.apis(), procDemo("ns-demo-"+label, seed))
	checkRecovered(t, rep, err, 0, 0, 0)
	out.demo = time.Since(start).Seconds()
	out.array = nsArray(t, c, label)
	out.merge = nsMerge(t, c, label, seed)
	t.Logf("%s: demo %.1f s, array rechunk %.1f s, merge %.1f s", label, out.demo, out.array, out.merge)
	return out
}

// nsArray rechunks a (400, 400) float64 array from 16 row slabs to 16
// column slabs (RunArrayDemo checks every element) and returns its time.
func nsArray(t *testing.T, c *nsCluster, label string) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shape := []int64{400, 400}
	rep, err := job.RunArrayDemo(ctx, c.apis(), job.ArrayConfig{ID: "ns-array-" + label, DType: "<f8",
		Old: job.RegularChunks(shape, []int64{25, 400}), New: job.RegularChunks(shape, []int64{400, 25})})
	if err != nil {
		t.Fatalf("array rechunk: %v", err)
	}
	if rep.Epoch != 0 {
		t.Errorf("array rechunk in epoch %d, want 0 (no node lost)", rep.Epoch)
	}
	return rep.TotalSeconds
}

// Sizes of nsMerge: left rows with keys uniform over the right's unique ones.
const (
	nsMergeLeft  = 40_000
	nsMergeRight = 10_000
)

// nsMerge inner-joins generated left and right Parquet files through c
// and checks that every left row is in the output exactly once (each
// matches one right row); it returns the merge's time.
func nsMerge(t *testing.T, c *nsCluster, label string, seed uint64) float64 {
	t.Helper()
	dir := t.TempDir()
	left, right, out := filepath.Join(dir, "left"), filepath.Join(dir, "right"), filepath.Join(dir, "out")
	step(t, synth.Parquet(synth.ParquetConfig{Dir: right, Rows: nsMergeRight, Files: 4, KeyType: "int64", Tag: true, Seed: seed}))
	step(t, synth.Parquet(synth.ParquetConfig{Dir: left, Rows: nsMergeLeft, Files: 8, KeyType: "int64", Cardinality: nsMergeRight, Seed: seed + 1}))
	plan, err := job.PlanMerge(job.MergeConfig{Left: filepath.Join(left, "*.parquet"), Right: filepath.Join(right, "*.parquet"),
		On: "key", How: "inner", Suffixes: "_x,_y", Job: job.ShuffleConfig{ID: "ns-merge-" + label, Output: out, Partitions: 8,
			Cluster: job.ClusterConfig{Addr: c.procs[0].api}, Compression: "snappy"}})
	step(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := plan.Run(ctx); err != nil {
		t.Fatalf("merge: %v", err)
	}
	took := time.Since(start).Seconds()
	checkOnce(t, out, "id_x", nsMergeLeft)
	return took
}

func step(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkOnce fails t unless the Parquet files in dir hold, in column col,
// every value of 0..n-1 exactly once.
func checkOnce(t *testing.T, dir, col string, n int) {
	t.Helper()
	paths, err := parquetio.Glob(filepath.Join(dir, "*.parquet"))
	step(t, err)
	seen := make([]int, n)
	for _, p := range paths {
		recs, err := parquetio.ReadFile(context.Background(), p, memory.DefaultAllocator, 0)
		step(t, err)
		for _, r := range recs {
			countIDs(t, r, col, seen)
			r.Release()
		}
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("merge output: %s %d is there %d times, want once", col, id, k)
		}
	}
}

// countIDs adds the int64 values of r's column col to seen.
func countIDs(t *testing.T, r arrow.Record, col string, seen []int) {
	t.Helper()
	idx := r.Schema().FieldIndices(col)
	if len(idx) != 1 {
		t.Fatalf("merge output has no column %s: %v", col, r.Schema())
	}
	ids, ok := r.Column(idx[0]).(*array.Int64)
	if !ok {
		t.Fatalf("merge output column %s is %s, want int64", col, r.Column(idx[0]).DataType())
	}
	for _, id := range ids.Int64Values() {
		if id < 0 || id >= int64(len(seen)) {
			t.Fatalf("merge output: %s %d out of range", col, id)
		}
		seen[id]++
	}
}

// Rates of TestNetnsSlowNode: the slow node gets a tenth of the others.
const (
	nsFastRate = 20 << 20
	nsSlowRate = nsFastRate / 10
)

// TestNetnsSlowNode limits one node's link to a tenth of the others' rate
// and runs a demo shuffle whose inputs go to the other nodes only, each of
// which has more for the slow node than its send budget (--memory-limit
// 8MiB: 2 MiB of send buffers). The shuffle is verified exactly once and
// no fast node's send buffers ever held more than their budget: the slow
// link pushes back on the puts instead of piling up in the others' memory.
func TestNetnsSlowNode(t *testing.T) {
	t.Parallel()
	c := startNetnsWith(t, 4, []string{"--memory-limit", "8MiB"})
	const slow = 3
	ctx := context.Background()
	for i, h := range c.net.Hosts {
		s := netns.Shape{Rate: nsFastRate}
		if i == slow {
			s.Rate = nsSlowRate
		}
		step(t, h.Shape(ctx, s))
	}
	cfg := procDemo("ns-slow", 7)
	cfg.Rows, cfg.PayloadBytes = 1_000_000, 32
	rep, err := runDemo(t, c.apis(c.others(slow)...), cfg)
	checkRecovered(t, rep, err, 0, 0, 0)
	for _, i := range c.others(slow) {
		checkSendBounded(t, c.net.Hosts[i], c.procs[i])
	}
	for i, p := range c.procs {
		t.Logf("%s (rate %d MiB/s): peak resident memory %s", p.name, map[bool]int{true: nsSlowRate >> 20, false: nsFastRate >> 20}[i == slow], peakRSS(p))
	}
}

// checkSendBounded fails t if p's send buffers ever held more than their
// budget (admin metrics), and logs what they held and the busy replies.
func checkSendBounded(t *testing.T, h *netns.Host, p *proc) {
	t.Helper()
	m, err := scrape(h.Addr(nsAdminPort))
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	peak, limit := m["shufflenode_splitter_peak_bytes"], m["shufflenode_splitter_limit_bytes"]
	t.Logf("%s: send buffers peaked at %.1f MiB of a %.1f MiB budget; %v busy replies from receivers",
		p.name, peak/(1<<20), limit/(1<<20), m["shufflenode_dht_busy_total"])
	if limit <= 0 || peak > limit {
		t.Errorf("%s: send buffers peaked at %.0f bytes, budget %.0f", p.name, peak, limit)
	}
}

// scrape reads the unlabelled-or-single-series metrics of the admin
// server at addr: name to value (the last series of a name wins).
func scrape(addr string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// peakRSS is the VmHWM line of p's /proc status ("?" if gone).
func peakRSS(p *proc) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
