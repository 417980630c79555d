package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/synth"
)

// TestProcessKillDuringNodeWrites runs a merge on 4 serve processes whose
// nodes read the input files (--read-on nodes) and write the output files
// (--write-on nodes), and SIGKILLs one of them after a seeded number of
// left input files were put, or of partitions were written: the merge must
// finish (the lost node's inputs replayed, read again by the nodes left;
// its partitions joined and written by their new owners), and the files
// must hold every left row exactly once (every left key has one right
// match), with no temporary file left behind. 2 seeds, each killing in
// both phases; SHUFFLENODE_SOAK=N for more.
func TestProcessKillDuringNodeWrites(t *testing.T) {
	t.Parallel()
	for seed := range soakSeeds(2) {
		for _, phase := range []string{"left", "join"} {
			t.Run(fmt.Sprintf("seed %d %s", seed, phase), func(t *testing.T) {
				t.Parallel()
				killMidMerge(t, seed, phase)
			})
		}
	}
}

// killMidMerge runs TestProcessKillDuringNodeWrites' merge, killing a node
// during phase ("left": its puts; "join": the joins and writes).
func killMidMerge(t *testing.T, seed int, phase string) {
	c := startProcs(t, 4)
	const left, right, parts, leftFiles = 40_000, 10_000, 24, 6
	in := filepath.Join(c.dir, "in")
	gen(t, synth.ParquetConfig{Dir: filepath.Join(in, "right"), Rows: right, Files: 2, KeyType: "int64", Tag: true, Seed: 2})
	gen(t, synth.ParquetConfig{Dir: filepath.Join(in, "left"), Rows: left, Files: leftFiles, KeyType: "int64", Cardinality: right, Seed: uint64(seed)})
	victim, at := 1+seed%3, 3+(seed*7)%(parts-6)
	if phase == "left" {
		at = 1 + seed%(leftFiles-2)
	}
	kill := onceAt(at, c.procs[victim].kill)
	out := filepath.Join(c.dir, "out")
	plan, err := job.PlanMerge(job.MergeConfig{Left: filepath.Join(in, "left", "*.parquet"), Right: filepath.Join(in, "right", "*.parquet"),
		On: "key", How: "inner", Suffixes: "_x,_y", Job: job.ShuffleConfig{Output: out, Partitions: parts, Parallel: 2,
			WriteOn: job.WriteNodes, ReadOn: job.ReadNodes, Cluster: job.ClusterConfig{Addr: c.procs[0].api},
			Progress: func(p string, done, _ int) {
				if p == phase {
					kill(done)
				}
			}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := plan.Run(ctx)
	var b strings.Builder
	rep.Print(&b)
	t.Logf("seed %d: %s killed after %d %s steps\n%s", seed, c.procs[victim].name, at, phase, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "read by the nodes") != 2 {
		t.Errorf("the nodes did not read both sides' files")
	}
	checkEachLeftRowOnce(t, out, parts, left)
	if tmp, _ := filepath.Glob(filepath.Join(out, ".part-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// gen writes generated Parquet files.
func gen(t *testing.T, cfg synth.ParquetConfig) {
	t.Helper()
	if err := synth.Parquet(cfg); err != nil {
		t.Fatal(err)
	}
}

// checkEachLeftRowOnce reads the merge's output files and checks that
// left ids 0..rows-1 each appear exactly once.
func checkEachLeftRowOnce(t *testing.T, dir string, parts, rows int) {
	t.Helper()
	seen := make([]int, rows)
	for p := range parts {
		path := filepath.Join(dir, job.PartFile(p, parts))
		recs, err := parquetio.ReadFile(context.Background(), path, memory.DefaultAllocator, 0)
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		for _, rec := range recs {
			ids := rec.Column(rec.Schema().FieldIndices("id_x")[0]).(*array.Int64)
			for _, id := range ids.Int64Values() {
				if id < 0 || id >= int64(rows) {
					t.Fatalf("partition %d: id_x %d out of range", p, id)
				}
				seen[id]++
			}
			rec.Release()
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("left row %d is in the output %d times, want once", id, n)
		}
	}
}
