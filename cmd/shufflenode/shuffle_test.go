package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/table"
)

// shuffleRow is one input row, keyed by its unique id.
type shuffleRow struct {
	key  int64
	name string // "" for null
	val  float64
}

func shuffleTestSchema(nullableKey bool) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int64, Nullable: nullableKey},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
}

// writeShuffleInputs writes files Parquet files of rowsPerFile rows each
// (keys in [0, 20), every 5th name null, file 1 with a nullable key column
// so schemas differ in nullability only) and returns every row by id.
func writeShuffleInputs(t *testing.T, dir string, files, rowsPerFile int) map[int64]shuffleRow {
	t.Helper()
	rows := map[int64]shuffleRow{}
	for f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, shuffleTestSchema(f == 1))
		for i := range rowsPerFile {
			id := int64(f*rowsPerFile + i)
			r := shuffleRow{key: (id * 7) % 20, name: fmt.Sprintf("n%d", id), val: float64(id) / 2}
			if id%5 == 0 {
				r.name = ""
			}
			rows[id] = r
			appendShuffleRow(b, id, r)
		}
		rec := b.NewRecord()
		b.Release()
		path := filepath.Join(dir, fmt.Sprintf("in-%02d.parquet", f))
		if err := parquetio.WriteFile(path, rec.Schema(), []arrow.Record{rec}); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return rows
}

func appendShuffleRow(b *array.RecordBuilder, id int64, r shuffleRow) {
	b.Field(0).(*array.Int64Builder).Append(r.key)
	b.Field(1).(*array.Int64Builder).Append(id)
	if r.name == "" {
		b.Field(2).AppendNull()
	} else {
		b.Field(2).(*array.StringBuilder).Append(r.name)
	}
	b.Field(3).(*array.Float64Builder).Append(r.val)
}

// runShuffleCmd runs cmdShuffle and returns its exit code and output.
func runShuffleCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cmdShuffle(args, &out, &errb)
	return code, out.String(), errb.String()
}

// readShuffleOutput reads every output file: rows by id with the partition
// (file index) each was found in. It fails on a file name out of order.
func readShuffleOutput(t *testing.T, dir string, partitions int) (map[int64]shuffleRow, map[int64]int) {
	t.Helper()
	files, err := parquetio.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != partitions {
		t.Fatalf("%d output files, want %d: %v", len(files), partitions, files)
	}
	rows, part := map[int64]shuffleRow{}, map[int64]int{}
	for p, path := range files {
		if want := job.PartFile(p, partitions); filepath.Base(path) != want {
			t.Fatalf("output file %d is %s, want %s", p, filepath.Base(path), want)
		}
		readShuffleFile(t, path, p, rows, part)
	}
	return rows, part
}

func readShuffleFile(t *testing.T, path string, p int, rows map[int64]shuffleRow, part map[int64]int) {
	t.Helper()
	recs, err := parquetio.ReadFile(context.Background(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	if sc, err := parquetio.ReadSchema(path); err != nil || table.CheckSchema(shuffleTestSchema(true), sc) != nil {
		t.Fatalf("%s: schema %v, %v", path, sc, err)
	}
	for _, rec := range recs {
		keys, ids := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
		names, vals := rec.Column(2).(*array.String), rec.Column(3).(*array.Float64)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			if _, dup := rows[id]; dup {
				t.Fatalf("row id %d appears twice (partitions %d and %d)", id, part[id], p)
			}
			r := shuffleRow{key: keys.Value(i), val: vals.Value(i)}
			if names.IsValid(i) {
				r.name = names.Value(i)
			}
			rows[id], part[id] = r, p
		}
	}
}

// checkShuffleOutput checks that every input row appears exactly once and
// unchanged, in the partition the rule assigns to its key, and that rows
// with equal keys share a file.
func checkShuffleOutput(t *testing.T, in map[int64]shuffleRow, dir string, rule table.Rule, partitions int) {
	t.Helper()
	out, part := readShuffleOutput(t, dir, partitions)
	if len(out) != len(in) {
		t.Fatalf("%d rows out, want %d", len(out), len(in))
	}
	fileOfKey := map[string]int{}
	pt := shuffleTestPartitioner(t, rule, partitions)
	keyOf := func(r shuffleRow) string { return fmt.Sprint(r.key) }
	if slices.Contains(rule.Columns, "name") {
		keyOf = func(r shuffleRow) string { return fmt.Sprint(r.key, "/", r.name) }
	}
	for id, want := range in {
		got, ok := out[id]
		if !ok || got != want {
			t.Fatalf("row %d: got %+v (present %v), want %+v", id, got, ok, want)
		}
		if f, seen := fileOfKey[keyOf(got)]; seen && f != part[id] {
			t.Fatalf("key %s in files %d and %d", keyOf(got), f, part[id])
		}
		fileOfKey[keyOf(got)] = part[id]
		if p := pt(got); p != part[id] {
			t.Fatalf("row %d (key %d) in partition %d, rule says %d", id, got.key, part[id], p)
		}
	}
}

// shuffleTestPartitioner returns the partition the rule gives one row.
func shuffleTestPartitioner(t *testing.T, rule table.Rule, partitions int) func(shuffleRow) int {
	t.Helper()
	pt, err := table.NewPartitioner(shuffleTestSchema(true), rule, partitions)
	if err != nil {
		t.Fatal(err)
	}
	return func(r shuffleRow) int {
		b := array.NewRecordBuilder(memory.DefaultAllocator, shuffleTestSchema(true))
		defer b.Release()
		appendShuffleRow(b, 0, r)
		rec := b.NewRecord()
		defer rec.Release()
		pids, err := pt.Partition(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		return int(pids[0])
	}
}

func TestShuffleEmbedded(t *testing.T) {
	in, outDir := t.TempDir(), filepath.Join(t.TempDir(), "out")
	rows := writeShuffleInputs(t, in, 5, 200)
	code, stdout, stderr := runShuffleCmd("--input", filepath.Join(in, "*.parquet"), "--on", "key",
		"--partitions", "7", "--output", outDir, "--nodes", "3", "--memory-limit", "64MiB", "--batch-rows", "64")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"rows in      1000 from 5 files", "rows out     1000 in 7 files", "MB/s", "files written by the nodes)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	checkShuffleOutput(t, rows, outDir, table.Rule{Kind: table.Hash, Columns: []string{"key"}}, 7)

	code, _, stderr = runShuffleCmd("--input", filepath.Join(in, "*.parquet"), "--on", "key",
		"--partitions", "3", "--output", outDir, "--nodes", "1")
	if code != 2 || !strings.Contains(stderr, "--overwrite") {
		t.Fatalf("second run into a full directory: exit %d: %s", code, stderr)
	}
}

// TestShuffleCluster runs shuffles on a running cluster whose nodes may
// write under outs: the second case's files are written by this process
// (--write-on client), the others' by the nodes.
func TestShuffleCluster(t *testing.T) {
	outs := t.TempDir()
	nodes := startTestCluster(t, outs)
	in := t.TempDir()
	rows := writeShuffleInputs(t, in, 4, 50)
	const divisions = "[5, 15, 5000, 6000]" // keys are in [0, 20): the last two partitions stay empty
	var divs []json.RawMessage
	if err := json.Unmarshal([]byte(divisions), &divs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		rule  table.Rule
		parts int
	}{
		{"hash on two columns", []string{"--on", "key,name", "--partitions", "5"},
			table.Rule{Kind: table.Hash, Columns: []string{"key", "name"}}, 5},
		{"hash, more partitions than keys", []string{"--on", "key", "--partitions", "64", "--compression", "zstd", "--write-on", "client"},
			table.Rule{Kind: table.Hash, Columns: []string{"key"}}, 64},
		{"range with empty partitions", []string{"--on", "key", "--divisions", divisions},
			table.Rule{Kind: table.Range, Columns: []string{"key"}, Divisions: divs}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(outs, strings.ReplaceAll(tc.name, " ", "-"))
			args := append([]string{"--input", filepath.Join(in, "*.parquet"), "--output", out,
				"--cluster", nodes[1].APIAddr()}, tc.args...)
			code, stdout, stderr := runShuffleCmd(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "running cluster of 3 nodes") {
				t.Errorf("report does not show the 3 members:\n%s", stdout)
			}
			who := "files written by the nodes)"
			if slices.Contains(tc.args, "client") {
				who = "files written by this process)"
			}
			if !strings.Contains(stdout, who) {
				t.Errorf("report lacks %q:\n%s", who, stdout)
			}
			checkShuffleOutput(t, rows, out, tc.rule, tc.parts)
		})
	}
}

func TestShuffleBadInput(t *testing.T) {
	in := t.TempDir()
	writeShuffleInputs(t, in, 2, 10)
	other := t.TempDir()
	writeShuffleInputs(t, other, 1, 10)
	renamed := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int64},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "title", Type: arrow.BinaryTypes.String},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64}}, nil)
	if err := parquetio.WriteFile(filepath.Join(other, "z-renamed.parquet"), renamed, nil); err != nil {
		t.Fatal(err)
	}
	unsupported := t.TempDir()
	dec := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.Decimal128Type{Precision: 9, Scale: 2}}}, nil)
	if err := parquetio.WriteFile(filepath.Join(unsupported, "d.parquet"), dec, nil); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "part-00000.parquet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	glob := filepath.Join(in, "*.parquet")
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"no input flag", []string{"--on", "key", "--partitions", "2", "--output", t.TempDir()}, "--input"},
		{"no on flag", []string{"--input", glob, "--partitions", "2", "--output", t.TempDir()}, "--on"},
		{"no output flag", []string{"--input", glob, "--on", "key", "--partitions", "2"}, "--output"},
		{"no partitions", []string{"--input", glob, "--on", "key", "--output", t.TempDir()}, "--partitions"},
		{"no files", []string{"--input", filepath.Join(in, "*.csv"), "--on", "key", "--partitions", "2", "--output", t.TempDir()}, "matches no file"},
		{"schema differs", []string{"--input", filepath.Join(other, "*.parquet"), "--on", "key", "--partitions", "2", "--output", t.TempDir()}, "z-renamed.parquet"},
		{"unsupported type", []string{"--input", filepath.Join(unsupported, "*"), "--on", "d", "--partitions", "2", "--output", t.TempDir()}, "decimal"},
		{"unknown column", []string{"--input", glob, "--on", "nope", "--partitions", "2", "--output", t.TempDir()}, "nope"},
		{"empty column", []string{"--input", glob, "--on", "key,", "--partitions", "2", "--output", t.TempDir()}, "empty column"},
		{"bad divisions", []string{"--input", glob, "--on", "key", "--divisions", "[1,", "--output", t.TempDir()}, "--divisions"},
		{"unsorted divisions", []string{"--input", glob, "--on", "key", "--divisions", "[5,1]", "--output", t.TempDir()}, "division"},
		{"range on two columns", []string{"--input", glob, "--on", "key,id", "--divisions", "[5]", "--output", t.TempDir()}, "column"},
		{"divisions and partitions disagree", []string{"--input", glob, "--on", "key", "--divisions", "[5]", "--partitions", "3", "--output", t.TempDir()}, "division"},
		{"output not empty", []string{"--input", glob, "--on", "key", "--partitions", "2", "--output", full}, "--overwrite"},
		{"nodes with cluster", []string{"--input", glob, "--on", "key", "--partitions", "2", "--output", t.TempDir(), "--cluster", "127.0.0.1:1", "--nodes", "2"}, "--nodes"},
		{"bad compression", []string{"--input", glob, "--on", "key", "--partitions", "2", "--output", t.TempDir(), "--compression", "lzo"}, "compression"},
		{"unknown flag", []string{"--bogus"}, "bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runShuffleCmd(tc.args...)
			t.Log(strings.TrimSpace(stderr))
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, want 2 and nothing", code, stdout)
			}
			if tc.name != "unknown flag" && strings.Count(stderr, "\n") != 1 {
				t.Errorf("error is not one line: %q", stderr)
			}
			if !strings.Contains(stderr, tc.mention) {
				t.Errorf("error %q does not mention %q", stderr, tc.mention)
			}
		})
	}
}

// releaseAll releases every record.
func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// BenchmarkShuffleParquet shuffles 1M generated rows (about 128 MB of Arrow
// data) in 20 Parquet files to 100 partitions on a 4-node in-process
// cluster, writing the output with and without dictionary encoding.
func BenchmarkShuffleParquet(b *testing.B) {
	const rows, files, partitions = 1_000_000, 20, 100
	gen := table.GenConfig{Rows: rows, Seed: 1, PayloadBytes: 100}
	in := b.TempDir()
	for f := range files {
		rec := table.GenTask(memory.DefaultAllocator, gen, f, files)
		err := parquetio.WriteFile(filepath.Join(in, fmt.Sprintf("in-%02d.parquet", f)), rec.Schema(), []arrow.Record{rec})
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, dict := range []bool{true, false} {
		b.Run(fmt.Sprintf("dictionary=%v", dict), func(b *testing.B) {
			benchShuffleParquet(b, rows*table.GenRowBytes(gen), "--input", filepath.Join(in, "*.parquet"), "--on", "key",
				"--partitions", fmt.Sprint(partitions), "--output", b.TempDir(), "--overwrite", "--nodes", "4",
				fmt.Sprintf("--no-dictionary=%v", !dict))
		})
	}
}

func benchShuffleParquet(b *testing.B, bytes int64, args ...string) {
	b.SetBytes(bytes)
	b.ReportAllocs()
	var stdout string
	for b.Loop() {
		var code int
		var stderr string
		if code, stdout, stderr = runShuffleCmd(args...); code != 0 {
			b.Fatalf("exit %d: %s", code, stderr)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()*1e6, "rows/s")
	b.Log("\n" + stdout)
}
