package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/service"
	"google.golang.org/grpc/codes"
)

// readPart reads a Parquet file the nodes wrote and checks its size and
// rows against the op's stats.
func readPart(t *testing.T, path string, st api.OpStats) []arrow.Record {
	t.Helper()
	recs, err := parquetio.ReadFile(context.Background(), path, memory.DefaultAllocator, 1000)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	t.Cleanup(func() { releaseRecords(recs) })
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	fi, err := os.Stat(path)
	if err != nil || rows != st.OutputRows || fi.Size() != st.FileBytes {
		t.Fatalf("%s: %d rows, %v; stats say %d rows, %d bytes", path, rows, err, st.OutputRows, st.FileBytes)
	}
	return recs
}

// kvStrings formats the rows of a kvSchema record.
func kvStrings(rec arrow.Record) []string {
	var out []string
	for _, r := range kvRows(rec) {
		out = append(out, cell(r.key)+"|"+fmt.Sprint(r.val))
	}
	return out
}

func releaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// joinFiles has the owners join every partition into dir/part-P.parquet
// (how: inner unless given) and returns the rows of all files and the
// input rows the nodes reported, summed per side.
func joinFiles(t *testing.T, ctx context.Context, res [2]*client.Result, parts int, dir string, how ...dfops.How) ([]string, [2]int64) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j := dfops.DefaultJoinSpec("key")
	if len(how) > 0 {
		j.How = how[0]
	}
	var got []string
	var in [2]int64
	for p := range parts {
		path := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", p))
		st, err := res[0].JoinFile(ctx, res[1], p, j, api.WriteSpec{Path: path})
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		if len(st.InputRows) != 2 {
			t.Fatalf("partition %d: stats %+v", p, st)
		}
		in[0], in[1] = in[0]+st.InputRows[0], in[1]+st.InputRows[1]
		for _, rec := range readPart(t, path, st) {
			got = append(got, joinRows(rec)...)
		}
	}
	slices.Sort(got)
	return got, in
}

// sortFiles has the owners sort every partition of res into a Parquet file
// under root, checks each file against a stable sort of the partition as
// read, and returns the passes the sorts reported.
func sortFiles(t *testing.T, ctx context.Context, res *client.Result, parts int, root string) (passes int) {
	t.Helper()
	for p := range parts {
		var part []kv
		if err := res.Read(ctx, p, func(rec arrow.Record) error { part = append(part, kvRows(rec)...); return nil }); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, fmt.Sprintf("sorted-%d.parquet", p))
		st, err := res.SortFile(ctx, p, "key", api.WriteSpec{Path: path, Compression: "zstd"})
		if err != nil {
			t.Fatal(err)
		}
		var got []kv
		for _, rec := range readPart(t, path, st) {
			got = append(got, kvRows(rec)...)
		}
		if !slices.EqualFunc(got, refSort(part), func(a, b kv) bool { return cell(a.key) == cell(b.key) && a.val == b.val }) {
			t.Errorf("partition %d: the file's rows differ from a stable sort (%d passes)", p, st.Passes)
		}
		passes += st.Passes
	}
	return passes
}

// TestSortFilesInPasses: with a node-side op budget of 1 KiB, the owners
// sort every partition into its file in passes, and each file holds the
// stable sort of the partition all the same.
func TestSortFilesInPasses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := t.TempDir()
	nodes := startClusterWith(t, 3, service.Config{MemoryLimit: 64 << 20, OutputBatchRows: 16, OpMemory: 1 << 10}, func(c *node.Config) {
		c.APISecurity.OutputRoots = []string{root}
	})
	left := kvTable{tasks: 4, rows: 300, keys: 150, nullEvery: 41, partitions: 8}
	res := left.run(t, ctx, left.spec(t, "wp-l", ""), apiAddrs(nodes))
	if passes := sortFiles(t, ctx, res, left.partitions, root); passes < 2*left.partitions {
		t.Errorf("%d passes in %d sorts, want at least 2 each", passes, left.partitions)
	}
}

// TestWriteOps: the owners join and sort every partition into Parquet
// files under their output root; the files hold exactly the rows of the
// streamed ops, before and after a node leaves (its inputs replayed).
// A path outside the root is refused, naming the node.
func TestWriteOps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	// Batches of 16 rows: a join's lead side reaches it in many records.
	nodes := startClusterWith(t, 3, service.Config{MemoryLimit: 64 << 20, OutputBatchRows: 16}, func(c *node.Config) {
		c.APISecurity.OutputRoots = []string{root}
	})
	left := kvTable{tasks: 4, rows: 300, keys: 150, nullEvery: 41, partitions: 8}
	right := kvTable{tasks: 3, rows: 100, keys: 120, nullEvery: 29, base: 1_000_000, partitions: 8}
	addrs := apiAddrs(nodes)
	res := [2]*client.Result{left.run(t, ctx, left.spec(t, "w-l", ""), addrs)}
	res[1] = right.run(t, ctx, right.spec(t, "w-r", "w-l"), addrs)
	want := refJoin(left.allRows(), right.allRows(), "inner")
	if got, _ := joinFiles(t, ctx, res, left.partitions, filepath.Join(root, "join")); !slices.Equal(got, want) {
		t.Fatalf("joined files hold %d rows, want %d", len(got), len(want))
	}
	for _, how := range []dfops.How{dfops.Left, dfops.Right, dfops.Outer} {
		got, in := joinFiles(t, ctx, res, left.partitions, filepath.Join(root, "join-"+string(how)), how)
		if want := refJoin(left.allRows(), right.allRows(), string(how)); !slices.Equal(got, want) {
			t.Errorf("%s join: the files hold %d rows, want %d", how, len(got), len(want))
		}
		if want := [2]int64{int64(left.tasks * left.rows), int64(right.tasks * right.rows)}; in != want {
			t.Errorf("%s join: the nodes reported %v input rows, want %v", how, in, want)
		}
	}
	t.Run("sort", func(t *testing.T) {
		if passes := sortFiles(t, ctx, res[0], left.partitions, root); passes != 0 {
			t.Errorf("sorts within the budget reported %d passes", passes)
		}
	})
	t.Run("copy", func(t *testing.T) {
		for p := range left.partitions {
			var want, got []string
			if err := res[0].Read(ctx, p, func(rec arrow.Record) error { want = append(want, kvStrings(rec)...); return nil }); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(root, fmt.Sprintf("copy-%d.parquet", p))
			st, err := res[0].CopyFile(ctx, p, api.WriteSpec{Path: path})
			if err != nil || st.Remote != 0 || st.InputRows[0] != int64(len(want)) {
				t.Fatalf("partition %d: %+v, %v (want %d rows read on the owner)", p, st, err, len(want))
			}
			for _, rec := range readPart(t, path, st) {
				got = append(got, kvStrings(rec)...)
			}
			if !slices.Equal(got, want) {
				t.Errorf("partition %d: the file holds %d rows, the partition %d, or in another order", p, len(got), len(want))
			}
		}
	})
	t.Run("outside the root", func(t *testing.T) {
		_, err := res[0].SortFile(ctx, 0, "key", api.WriteSpec{Path: filepath.Join(t.TempDir(), "p.parquet")})
		wantCode(t, "outside the root", err, codes.PermissionDenied)
		if !strings.Contains(err.Error(), "outside node node-") {
			t.Errorf("error %q does not name the node", err)
		}
	})
	t.Run("after a node left", func(t *testing.T) {
		leave(t, ctx, nodes, 2, "w-l")
		if got, _ := joinFiles(t, ctx, res, left.partitions, filepath.Join(root, "after")); !slices.Equal(got, want) {
			t.Fatalf("joined files hold %d rows after the loss, want %d", len(got), len(want))
		}
	})
}
