package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/shufflenode/shufflenode/parquetio"
)

func TestGenParquet(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCmd(cmdGenParquet, "--output", dir, "--rows", "10000", "--files", "3", "--keys", "100",
		"--skew", "0.3", "--nulls", "0.1", "--key-type", "int32", "--tag")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "10000 rows in 3 files") {
		t.Errorf("stdout %q", stdout)
	}
	files, err := parquetio.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) != 3 {
		t.Fatalf("files %v, %v", files, err)
	}
	in, err := parquetio.CheckInputs(files)
	if err != nil || in.Rows != 10000 || in.Schema.NumFields() != 4 {
		t.Fatalf("inputs %+v, %v", in, err)
	}
	var zeros, nulls, ids int
	for _, path := range files {
		recs, err := parquetio.ReadFile(context.Background(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			keys, id := rec.Column(0).(*array.Int32), rec.Column(1).(*array.Int64)
			for i := range keys.Len() {
				switch {
				case keys.IsNull(i):
					nulls++
				case keys.Value(i) == 0:
					zeros++
				case keys.Value(i) < 0 || keys.Value(i) >= 100:
					t.Fatalf("key %d outside [0, 100)", keys.Value(i))
				}
				if id.Value(i) != int64(ids) {
					t.Fatalf("id %d at row %d", id.Value(i), ids)
				}
				ids++
			}
		}
		releaseAll(recs)
	}
	if zeros < 2800 || zeros > 3400 || nulls < 800 || nulls > 1200 {
		t.Errorf("%d zero keys (want ~3000 + ~70) and %d nulls (want ~1000)", zeros, nulls)
	}
}

func TestGenParquetBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--rows", "5"}, {"--output", t.TempDir(), "--key-type", "utf8"},
		{"--output", t.TempDir(), "--skew", "0.8", "--nulls", "0.5"}, {"--output", t.TempDir(), "--files", "0"}} {
		if code, _, stderr := runCmd(cmdGenParquet, args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
}

// TestCLIDocExample runs the example of docs/cli.md (merge), smaller: generate both sides
// (int64 keys on the left, int32 on the right), merge them, set the index.
func TestCLIDocExample(t *testing.T) {
	d := t.TempDir()
	steps := []struct {
		cmd  func([]string, io.Writer, io.Writer) int
		args string
		want string
	}{
		{cmdGenParquet, "--output L --rows 20000 --files 4 --keys 5000 --skew 0.3 --nulls 0.01", "20000 rows"},
		{cmdGenParquet, "--output R --rows 5000 --files 2 --key-type int32 --tag", "5000 rows"},
		{cmdMerge, "--left L/*.parquet --right R/*.parquet --on key --how left --partitions 16 --output M --nodes 2", "left on key: 20000 rows out"},
		{cmdSetIndex, "--input M/*.parquet --column tag --partitions 8 --output S --nodes 2", "rows out     20000 in 8 files"},
	}
	for _, s := range steps {
		args := strings.Fields(s.args)
		for i, a := range args {
			if i > 0 && strings.HasPrefix(args[i-1], "--") && strings.ContainsAny(a[:1], "LRMS") {
				args[i] = filepath.Join(d, a)
			}
		}
		code, stdout, stderr := runCmd(s.cmd, args...)
		if code != 0 || !strings.Contains(stdout, s.want) {
			t.Fatalf("%s: exit %d, stdout:\n%s\nstderr: %s", s.args, code, stdout, stderr)
		}
	}
}
