package integration

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/service"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// writeTaskFiles writes each input task of k to dir/task-N.parquet and
// returns the paths.
func writeTaskFiles(t *testing.T, k kvTable, dir string) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for task := range k.tasks {
		rec := k.record(task)
		path := filepath.Join(dir, fmt.Sprintf("task-%d.parquet", task))
		err := parquetio.WriteFile(path, kvSchema, []arrow.Record{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// fileJob is a client job of k's spec whose inputs are files: Input fails
// the test (the nodes must read every file) unless fallback.
func fileJob(t *testing.T, k kvTable, id string, addrs, paths []string, fallback bool) (client.Job, *[]flightproto.PutReply) {
	var mu sync.Mutex
	replies := new([]flightproto.PutReply)
	return client.Job{Spec: k.spec(t, id, ""), Nodes: addrs, FilesOnly: !fallback,
		InputFile: func(task int) (string, uint64) { return paths[task], uint64(k.rows) },
		Input: func(task int) ([]arrow.Record, error) {
			if !fallback {
				t.Errorf("task %d read by the client", task)
			}
			return []arrow.Record{k.record(task)}, nil
		},
		FilePut: func(task int, r flightproto.PutReply) { mu.Lock(); *replies = append(*replies, r); mu.Unlock() },
	}, replies
}

// readAllKV reads every partition of res as sorted row strings.
func readAllKV(t *testing.T, ctx context.Context, res *client.Result, parts int) []string {
	t.Helper()
	var got []string
	for p := range parts {
		err := res.Read(ctx, p, func(rec arrow.Record) error { got = append(got, kvStrings(rec)...); return nil })
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
	}
	slices.Sort(got)
	return got
}

// kvWant is every row of k as sorted row strings.
func kvWant(k kvTable) []string {
	var want []string
	for task := range k.tasks {
		rec := k.record(task)
		want = append(want, kvStrings(rec)...)
		rec.Release()
	}
	slices.Sort(want)
	return want
}

// TestFilePuts: on a real 3-node cluster, the nodes read every input task
// from its Parquet file under their input root (PutCmd.File) and the
// output holds exactly the rows of the files. A file outside the root is
// refused with PermissionDenied naming the node (the client then reads it
// itself, unless FilesOnly); a file whose rows differ from the declared
// count, or whose columns differ from the shuffle's, fails the put with
// InvalidArgument naming the shuffle and task.
func TestFilePuts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	nodes := startClusterWith(t, 3, service.Config{MemoryLimit: 64 << 20}, func(c *node.Config) {
		c.APISecurity.InputRoots = []string{root}
	})
	addrs := apiAddrs(nodes)
	k := kvTable{tasks: 5, rows: 300, keys: 150, nullEvery: 41, partitions: 8}
	paths := writeTaskFiles(t, k, filepath.Join(root, "in"))

	job, replies := fileJob(t, k, "fp-ok", addrs, paths, false)
	res, err := client.Run(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
	if got := readAllKV(t, ctx, res, k.partitions); !slices.Equal(got, kvWant(k)) {
		t.Fatalf("the output holds %d rows, want the %d rows of the files", len(got), k.tasks*k.rows)
	}
	var rows uint64
	for _, r := range *replies {
		if !r.Skipped {
			rows += r.Rows
		}
	}
	if nodeReads, why := res.NodeReads(); !nodeReads || rows != uint64(k.tasks*k.rows) {
		t.Errorf("node reads %v (%v), %d rows put from files; want every one of %d", nodeReads, why, rows, k.tasks*k.rows)
	}

	t.Run("outside the root", func(t *testing.T) {
		outside := writeTaskFiles(t, k, t.TempDir())
		job, _ := fileJob(t, k, "fp-out", addrs, outside, false)
		job.MaxRounds = 1
		_, err := client.Run(ctx, job)
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "outside node") {
			t.Fatalf("FilesOnly put of a file outside the root: %v; want PermissionDenied naming the node", err)
		}
		job, _ = fileJob(t, k, "fp-fallback", addrs, outside, true)
		res, err := client.Run(ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close(context.Background())
		if nodeReads, why := res.NodeReads(); nodeReads || status.Code(why) != codes.PermissionDenied {
			t.Errorf("after a refusal: node reads %v, why %v", nodeReads, why)
		}
		if got := readAllKV(t, ctx, res, k.partitions); !slices.Equal(got, kvWant(k)) {
			t.Errorf("the client-read output holds %d rows, want %d", len(got), k.tasks*k.rows)
		}
	})

	t.Run("bad files", func(t *testing.T) {
		c, err := client.Dial(addrs[0])
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sp := k.spec(t, "fp-bad", "")
		if err := c.Create(ctx, sp); err != nil {
			t.Fatal(err)
		}
		other := writeOtherFile(t, filepath.Join(root, "other.parquet"))
		for _, tc := range []struct {
			name, path string
			rows       uint64
			want       string
		}{
			{"rows differ from the declared count", paths[1], uint64(k.rows + 1), "declared"},
			{"columns differ", other, 3, other},
		} {
			cmd := flightproto.PutCmd{Shuffle: sp.ID, Task: 1, File: tc.path, Rows: tc.rows}
			_, err := c.Put(ctx, cmd, kvSchema, func() (arrow.Record, error) { return nil, io.EOF })
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "fp-bad") {
				t.Errorf("%s: %v; want InvalidArgument naming the shuffle and %q", tc.name, err, tc.want)
			}
		}
	})
}

// writeOtherFile writes a 3-row file whose one column is a string "name".
func writeOtherFile(t *testing.T, path string) string {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "name", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "b", "c"}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	if err := parquetio.WriteFile(path, schema, []arrow.Record{rec}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCreateSkipsLostHome: a shuffle whose home node (the one its ID
// picks to create it) was lost before it started is created on the next
// node, and runs: a job's second shuffle after a node died between them.
func TestCreateSkipsLostHome(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := startClusterWith(t, 3, service.Config{MemoryLimit: 64 << 20})
	addrs := apiAddrs(nodes)
	const dead = 1
	if err := nodes[dead].Close(); err != nil {
		t.Fatal(err)
	}
	k := kvTable{tasks: 4, rows: 100, keys: 50, partitions: 6}
	id := ""
	for i := 0; id == ""; i++ { // an ID whose home is the dead node (client's homeOf: FNV-1a mod nodes)
		h := fnv.New32a()
		h.Write([]byte(fmt.Sprintf("home-%d", i)))
		if h.Sum32()%uint32(len(addrs)) == dead {
			id = fmt.Sprintf("home-%d", i)
		}
	}
	res, err := client.Run(ctx, client.Job{Spec: k.spec(t, id, ""), Nodes: addrs,
		Input: func(task int) ([]arrow.Record, error) { return []arrow.Record{k.record(task)}, nil }})
	if err != nil {
		t.Fatalf("shuffle %s, whose home node is gone: %v", id, err)
	}
	defer res.Close(context.Background())
	if got := readAllKV(t, ctx, res, k.partitions); !slices.Equal(got, kvWant(k)) {
		t.Fatalf("%d rows out, want %d", len(got), k.tasks*k.rows)
	}
}
