package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/service"
)

// dfRow is one row as Go values by column name; nil is a null.
type dfRow map[string]any

// dfCol describes a generated column: its type and a value for row i.
type dfCol struct {
	name string
	typ  arrow.DataType
	gen  func(rng *rand.Rand, i int) any
}

// writeDFFiles writes files Parquet files of rows rows each and returns
// every row in file order, then row order.
func writeDFFiles(t testing.TB, dir, prefix string, files, rows int, cols []dfCol, seed uint64) []dfRow {
	t.Helper()
	var all []dfRow
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	rng := rand.New(rand.NewPCG(seed, 1))
	for f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := range rows {
			row := dfRow{}
			for ci, c := range cols {
				row[c.name] = c.gen(rng, f*rows+i)
				appendDF(t, b.Field(ci), row[c.name])
			}
			all = append(all, row)
		}
		rec := b.NewRecord()
		b.Release()
		err := parquetio.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.parquet", prefix, f)), schema, []arrow.Record{rec})
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

func appendDF(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int32Builder:
		b.Append(int32(v.(int64)))
	case *array.Int64Builder:
		b.Append(v.(int64))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.StringBuilder:
		b.Append(v.(string))
	default:
		t.Fatalf("appendDF: no case for %T", b)
	}
}

// dfValue returns row i of arr as int64, float64 or string; nil if null.
func dfValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	}
	panic("dfValue: no case for " + arr.DataType().String())
}

// readDFOutput reads the part files of dir in name order: the rows of each
// partition, and the column names of the first file.
func readDFOutput(t testing.TB, dir string, partitions int) ([][]dfRow, []string) {
	t.Helper()
	files, err := parquetio.Glob(filepath.Join(dir, "part-*.parquet"))
	if err != nil || len(files) != partitions {
		t.Fatalf("%d output files (%v), want %d", len(files), err, partitions)
	}
	parts := make([][]dfRow, len(files))
	var names []string
	for p, path := range files {
		if want := job.PartFile(p, partitions); filepath.Base(path) != want {
			t.Fatalf("file %d is %s, want %s", p, filepath.Base(path), want)
		}
		recs, err := parquetio.ReadFile(context.Background(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := parquetio.ReadSchema(path)
		names = schemaNames(sc)
		for _, rec := range recs {
			for i := range int(rec.NumRows()) {
				row := dfRow{}
				for c, col := range rec.Columns() {
					row[rec.ColumnName(c)] = dfValue(col, i)
				}
				parts[p] = append(parts[p], row)
			}
		}
		releaseAll(recs)
	}
	return parts, names
}

func (r dfRow) String(names []string) string {
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%v ", n, r[n])
	}
	return b.String()
}

// mergeKey draws keys in [0, 25) with 10% nulls and 7 in 30% of rows.
func mergeKey(rng *rand.Rand, _ int) any {
	switch p := rng.Float64(); {
	case p < 0.1:
		return nil
	case p < 0.4:
		return int64(7)
	default:
		return int64(rng.IntN(25))
	}
}

func seqID(_ *rand.Rand, i int) any { return int64(i) }

func nameOf(prefix string) func(*rand.Rand, int) any {
	return func(rng *rand.Rand, i int) any {
		if rng.IntN(6) == 0 {
			return nil
		}
		return fmt.Sprintf("%s%d", prefix, rng.IntN(3))
	}
}

func halfOf(_ *rand.Rand, i int) any { return float64(i) / 2 }

// The left side has an int64 key, the right side an int32 key (cast to
// int64 before the shuffle); both have a "name" column.
var (
	mergeLeftCols = []dfCol{{"key", arrow.PrimitiveTypes.Int64, mergeKey}, {"id", arrow.PrimitiveTypes.Int64, seqID},
		{"name", arrow.BinaryTypes.String, nameOf("l")}, {"val", arrow.PrimitiveTypes.Float64, halfOf}}
	mergeRightCols = []dfCol{{"rid", arrow.PrimitiveTypes.Int64, seqID}, {"key", arrow.PrimitiveTypes.Int32, mergeKey},
		{"name", arrow.BinaryTypes.String, nameOf("l")}, {"score", arrow.PrimitiveTypes.Float64, halfOf}}
)

// refMerge is the brute-force reference: a nested-loop join of the rows;
// keys with a null never match. same lists the key pairs of one name, which
// appear once (taking the right value on right-only rows).
func refMerge(l, r []dfRow, lk, rk []string, how string, suffix func(side int, name string) string) []dfRow {
	var out []dfRow
	matchedR := make([]bool, len(r))
	for _, lr := range l {
		found := false
		for j, rr := range r {
			if keysMatch(lr, rr, lk, rk) {
				out, found, matchedR[j] = append(out, joinRow(lr, rr, lk, rk, suffix)), true, true
			}
		}
		if !found && (how == "left" || how == "outer") {
			out = append(out, joinRow(lr, nil, lk, rk, suffix))
		}
	}
	for j, rr := range r {
		if !matchedR[j] && (how == "right" || how == "outer") {
			out = append(out, joinRow(nil, rr, lk, rk, suffix))
		}
	}
	return out
}

func keysMatch(l, r dfRow, lk, rk []string) bool {
	for k := range lk {
		if l[lk[k]] == nil || r[rk[k]] == nil || fmt.Sprint(l[lk[k]]) != fmt.Sprint(r[rk[k]]) {
			return false
		}
	}
	return true
}

// joinRow builds an output row from a left and a right row (either may be
// nil) with each column under its output name.
func joinRow(l, r dfRow, lk, rk []string, suffix func(int, string) string) dfRow {
	out := dfRow{}
	merged := map[string]bool{}
	for k := range lk {
		if lk[k] == rk[k] {
			merged[lk[k]] = true
			out[lk[k]] = l[lk[k]]
			if l == nil {
				out[lk[k]] = r[rk[k]]
			}
		}
	}
	for _, c := range mergeLeftCols {
		if !merged[c.name] {
			out[suffix(0, c.name)] = l[c.name]
		}
	}
	for _, c := range mergeRightCols {
		if !merged[c.name] {
			out[suffix(1, c.name)] = r[c.name]
		}
	}
	return out
}

// checkMerge compares the merge output with refMerge as multisets, checks the
// column names, and that the matched rows of each key (output columns keys)
// share one file: the two sides were co-partitioned.
func checkMerge(t *testing.T, dir string, parts int, want []dfRow, wantNames, keys []string) {
	t.Helper()
	got, names := readDFOutput(t, dir, parts)
	if !slices.Equal(names, wantNames) {
		t.Fatalf("columns %v, want %v", names, wantNames)
	}
	var g, w []string
	fileOfKey := map[string]int{}
	for p, rows := range got {
		for _, row := range rows {
			g = append(g, row.String(names))
			k := ""
			for _, c := range keys {
				k += fmt.Sprint(row[c], "|")
			}
			if row["val"] != nil && row["score"] != nil { // a matched row
				if f, ok := fileOfKey[k]; ok && f != p {
					t.Errorf("key %s in partitions %d and %d", k, f, p)
				}
				fileOfKey[k] = p
			}
		}
	}
	for _, row := range want {
		w = append(w, row.String(names))
	}
	slices.Sort(g)
	slices.Sort(w)
	if len(g) != len(w) {
		t.Fatalf("%d rows out, want %d", len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("sorted row %d: got %s, want %s", i, g[i], w[i])
		}
	}
}

func runCmd(cmd func([]string, io.Writer, io.Writer) int, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cmd(args, &out, &errb)
	return code, out.String(), errb.String()
}

// startTestCluster runs a 3-node in-process cluster for a test, whose
// nodes may write files under roots (none: they refuse).
func startTestCluster(t *testing.T, roots ...string) []*node.Node {
	t.Helper()
	return startTestClusterSec(t, api.Security{OutputRoots: roots})
}

// startTestClusterSec starts 3 nodes whose API has security sec.
func startTestClusterSec(t *testing.T, sec api.Security) []*node.Node {
	t.Helper()
	log := newLogger(os.Stderr, "error")
	nodes, err := node.StartLocal(context.Background(), 3, node.Config{
		Cluster:     dht.Config{DataDir: t.TempDir(), Profile: "local", Logger: log},
		Service:     service.Config{MemoryLimit: 64 << 20, Logger: log},
		APISecurity: sec, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.CloseAll(nodes) })
	return nodes
}

func pandasSuffix(clash map[string]bool, sfx [2]string) func(int, string) string {
	return func(side int, name string) string {
		if clash[name] {
			return name + sfx[side]
		}
		return name
	}
}

func TestMergeMatchesNestedLoop(t *testing.T) {
	nodes := startTestCluster(t)
	dir := t.TempDir()
	left := writeDFFiles(t, dir, "left", 4, 150, mergeLeftCols, 1)
	right := writeDFFiles(t, dir, "right", 3, 60, mergeRightCols, 2)
	lglob, rglob := filepath.Join(dir, "left-*"), filepath.Join(dir, "right-*")
	cases := []struct {
		name   string
		args   []string
		lk, rk []string
		clash  map[string]bool
		names  []string
	}{
		{"on key", []string{"--on", "key"}, []string{"key"}, []string{"key"}, map[string]bool{"name": true},
			[]string{"key", "id", "name_x", "val", "rid", "name_y", "score"}},
		{"on key and name", []string{"--on", "key,name"}, []string{"key", "name"}, []string{"key", "name"}, map[string]bool{},
			[]string{"key", "id", "name", "val", "rid", "score"}},
		{"left-on id, right-on rid", []string{"--left-on", "id", "--right-on", "rid", "--suffixes", "_l,_r"}, []string{"id"}, []string{"rid"},
			map[string]bool{"name": true, "key": true}, []string{"key_l", "id", "name_l", "val", "rid", "key_r", "name_r", "score"}},
	}
	for _, tc := range cases {
		for _, how := range []string{"inner", "left", "right", "outer"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				out := t.TempDir()
				args := append([]string{"--left", lglob, "--right", rglob, "--how", how, "--partitions", "5",
					"--output", out, "--cluster", nodes[0].APIAddr()}, tc.args...)
				code, stdout, stderr := runCmd(cmdMerge, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if !strings.Contains(stdout, "verified") || !strings.Contains(stdout, "largest") {
					t.Errorf("report:\n%s", stdout)
				}
				if !strings.Contains(stdout, mergeAllLocal) {
					t.Errorf("co-partitioned sides: every join should read both inputs on its node:\n%s", stdout)
				}
				if !strings.Contains(stdout, "files        written by this process (the nodes could not: ") {
					t.Errorf("nodes without an output root: this process should write the files, and say why:\n%s", stdout)
				}
				sfx := [2]string{"_x", "_y"}
				if tc.name == "left-on id, right-on rid" {
					sfx = [2]string{"_l", "_r"}
				}
				want := refMerge(left, right, tc.lk, tc.rk, how, pandasSuffix(tc.clash, sfx))
				checkMerge(t, out, 5, want, tc.names, tc.lk)
			})
		}
	}
}

// TestMergeEmbedded runs the merge on its own in-process cluster, with a
// skewed key (7 in 30% of the rows of both sides).
func TestMergeEmbedded(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	left := writeDFFiles(t, dir, "left", 3, 100, mergeLeftCols, 3)
	right := writeDFFiles(t, dir, "right", 2, 50, mergeRightCols, 4)
	code, stdout, stderr := runCmd(cmdMerge, "--left", filepath.Join(dir, "left-*"), "--right", filepath.Join(dir, "right-*"),
		"--on", "key", "--how", "outer", "--partitions", "4", "--output", out, "--nodes", "2", "--memory-limit", "32MiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log("\n" + stdout)
	want := refMerge(left, right, []string{"key"}, []string{"key"}, "outer", pandasSuffix(map[string]bool{"name": true}, [2]string{"_x", "_y"}))
	checkMerge(t, out, 4, want, []string{"key", "id", "name_x", "val", "rid", "name_y", "score"}, []string{"key"})
	if !strings.Contains(stdout, fmt.Sprintf("largest      partition %d: ", partitionOfKey(t, out, 7))) {
		t.Errorf("the largest partition should be the skewed key's (%d):\n%s", partitionOfKey(t, out, 7), stdout)
	}
	if !strings.Contains(stdout, mergeAllLocal) || !strings.Contains(stdout, "joined on node-") {
		t.Errorf("the joins should run on the nodes, each reading both inputs locally:\n%s", stdout)
	}
}

// TestMergeWriteOn: with --write-on nodes the nodes write the files
// (given an output root over --output), or the merge fails naming the node
// that refused; with --write-on client this process writes them.
func TestMergeWriteOn(t *testing.T) {
	dir, outs := t.TempDir(), t.TempDir()
	open, closed := startTestCluster(t, outs), startTestCluster(t)
	left := writeDFFiles(t, dir, "left", 3, 120, mergeLeftCols, 6)
	right := writeDFFiles(t, dir, "right", 2, 40, mergeRightCols, 7)
	want := refMerge(left, right, []string{"key"}, []string{"key"}, "left", pandasSuffix(map[string]bool{"name": true}, [2]string{"_x", "_y"}))
	names := []string{"key", "id", "name_x", "val", "rid", "name_y", "score"}
	for _, tc := range []struct {
		name, writeOn string
		cluster       []string // --cluster, or nothing for an in-process one
		report        string
	}{
		{"nodes with a root", "nodes", []string{"--cluster", open[1].APIAddr()}, "files        written by the nodes\n"},
		{"auto with a root", "auto", []string{"--cluster", open[0].APIAddr()}, "files        written by the nodes\n"},
		{"client", "client", []string{"--cluster", open[0].APIAddr()}, "files        written by this process\n"},
		{"embedded nodes", "nodes", []string{"--nodes", "2"}, "files        written by the nodes\n"},
		{"a failed attempt's temporary file left", "nodes", []string{"--nodes", "2"},
			"files        written by the nodes; removed 1 temporary files of failed attempts\n"},
		{"embedded client", "client", []string{"--nodes", "2"}, "files        written by this process\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(outs, strings.ReplaceAll(tc.name, " ", "-"))
			left := filepath.Join(out, ".part-00003.parquet.tmp-12345")
			if strings.Contains(tc.name, "temporary") {
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(left, []byte("half a file"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := append([]string{"--left", filepath.Join(dir, "left-*"), "--right", filepath.Join(dir, "right-*"), "--on", "key",
				"--how", "left", "--partitions", "6", "--output", out, "--write-on", tc.writeOn}, tc.cluster...)
			code, stdout, stderr := runCmd(cmdMerge, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, tc.report) {
				t.Errorf("want %q in the report:\n%s", tc.report, stdout)
			}
			if _, err := os.Stat(left); err == nil {
				t.Errorf("the temporary file %s is still there", left)
			}
			checkMerge(t, out, 6, want, names, []string{"key"})
		})
	}
	mergeWhereFails(t, dir, "--write-on", closed[0].APIAddr(), "has no output root")
}

// mergeWhereFails checks the failures of flag (--read-on or --write-on):
// "nodes" against a cluster at addr whose nodes have no root fails naming
// the node and saying why (refusal), and a value it does not know is a
// usage error naming it.
func mergeWhereFails(t *testing.T, dir, flag, addr, refusal string) {
	t.Helper()
	args := func(where string) []string {
		return []string{"--left", filepath.Join(dir, "left-*"), "--right", filepath.Join(dir, "right-*"), "--on", "key",
			"--partitions", "6", "--output", t.TempDir(), flag, where}
	}
	t.Run("nodes without a root", func(t *testing.T) {
		code, _, stderr := runCmd(cmdMerge, append(args("nodes"), "--cluster", addr)...)
		if code == 0 || !strings.Contains(stderr, "PermissionDenied") || !strings.Contains(stderr, refusal) || !strings.Contains(stderr, "node-") {
			t.Fatalf("exit %d, want a failure naming the node that refused and why:\n%s", code, stderr)
		}
	})
	t.Run("bad "+flag, func(t *testing.T) {
		code, _, stderr := runCmd(cmdMerge, args("disk")...)
		if code != 2 || !strings.Contains(stderr, flag+` "disk"`) {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}

// TestMergeReadOn: the nodes read the input files (--read-on nodes, and
// auto) where they may, this process where they may not (auto, saying why),
// or the merge fails naming the node (nodes); the output is the same.
func TestMergeReadOn(t *testing.T) {
	dir := t.TempDir()
	open, closed := startTestClusterSec(t, api.Security{InputRoots: []string{dir}}), startTestCluster(t)
	left := writeDFFiles(t, dir, "left", 3, 120, mergeLeftCols, 6)
	right := writeDFFiles(t, dir, "right", 2, 40, mergeRightCols, 7)
	want := refMerge(left, right, []string{"key"}, []string{"key"}, "left", pandasSuffix(map[string]bool{"name": true}, [2]string{"_x", "_y"}))
	names := []string{"key", "id", "name_x", "val", "rid", "name_y", "score"}
	byNodes, byClient := "Arrow; read by the nodes)", "Arrow; read here (a node could not: "
	for _, tc := range []struct {
		name, readOn string
		cluster      []string // --cluster, or nothing for an in-process one
		report       string   // on both sides' lines
	}{
		{"nodes with a root", "nodes", []string{"--cluster", open[1].APIAddr()}, byNodes},
		{"auto with a root", "auto", []string{"--cluster", open[0].APIAddr()}, byNodes},
		{"auto without a root", "auto", []string{"--cluster", closed[0].APIAddr()}, byClient},
		{"client", "client", []string{"--cluster", open[0].APIAddr()}, "Arrow; read here)"},
		{"embedded nodes", "nodes", []string{"--nodes", "2"}, byNodes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"--left", filepath.Join(dir, "left-*"), "--right", filepath.Join(dir, "right-*"), "--on", "key",
				"--how", "left", "--partitions", "6", "--output", out, "--read-on", tc.readOn}, tc.cluster...)
			code, stdout, stderr := runCmd(cmdMerge, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if n := strings.Count(stdout, tc.report); n != 2 {
				t.Errorf("want %q on both sides' lines (%d) of the report:\n%s", tc.report, n, stdout)
			}
			checkMerge(t, out, 6, want, names, []string{"key"})
		})
	}
	mergeWhereFails(t, dir, "--read-on", closed[0].APIAddr(), "has no input root")
}

// mergeAllLocal is what the report says when every join read both of its
// input partitions on the node that ran it.
const mergeAllLocal = "(on the nodes; 0 partitions read an input from another node)"

// partitionOfKey returns the output file holding key k.
func partitionOfKey(t *testing.T, dir string, k int64) int {
	got, _ := readDFOutput(t, dir, 4)
	for p, rows := range got {
		for _, r := range rows {
			if r["key"] == k {
				return p
			}
		}
	}
	return -1
}

func TestMergeBadInput(t *testing.T) {
	dir := t.TempDir()
	writeDFFiles(t, dir, "left", 1, 10, mergeLeftCols, 5)
	writeDFFiles(t, dir, "right", 1, 10, mergeRightCols, 6)
	strKey := []dfCol{{"key", arrow.BinaryTypes.String, nameOf("k")}}
	writeDFFiles(t, dir, "strkey", 1, 10, strKey, 7)
	l, r, s := filepath.Join(dir, "left-*"), filepath.Join(dir, "right-*"), filepath.Join(dir, "strkey-*")
	cases := []struct {
		name    string
		args    []string
		mention []string
	}{
		{"string vs int64 key", []string{"--left", l, "--right", s, "--on", "key"}, []string{`"key" (int64)`, `"key" (utf8)`}},
		{"unknown key", []string{"--left", l, "--right", r, "--on", "nope"}, []string{`"nope"`}},
		{"on with left-on", []string{"--left", l, "--right", r, "--on", "key", "--left-on", "id", "--right-on", "rid"}, []string{"--on"}},
		{"left-on without right-on", []string{"--left", l, "--right", r, "--left-on", "id"}, []string{"--left-on"}},
		{"key counts differ", []string{"--left", l, "--right", r, "--left-on", "id,key", "--right-on", "rid"}, []string{"2 left keys"}},
		{"bad how", []string{"--left", l, "--right", r, "--on", "key", "--how", "cross"}, []string{"cross"}},
		{"bad suffixes", []string{"--left", l, "--right", r, "--on", "key", "--suffixes", "_a"}, []string{"--suffixes"}},
		{"no left", []string{"--right", r, "--on", "key"}, []string{"--left"}},
		{"no right files", []string{"--left", l, "--right", filepath.Join(dir, "none-*"), "--on", "key"}, []string{"--right"}},
		{"no partitions", []string{"--left", l, "--right", r, "--on", "key", "--partitions", "0"}, []string{"--partitions"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--partitions", "2", "--output", t.TempDir()}, tc.args...)
			code, stdout, stderr := runCmd(cmdMerge, args...)
			t.Log(strings.TrimSpace(stderr))
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q: want 2, nothing, one line", code, stdout, stderr)
			}
			for _, m := range tc.mention {
				if !strings.Contains(stderr, m) {
					t.Errorf("error %q does not mention %s", stderr, m)
				}
			}
		})
	}
}

// schemaNames lists the schema's column names.
func schemaNames(schema *arrow.Schema) []string {
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	return names
}
