package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// skewedInt draws int64 keys in [-50, 50) with 10% nulls and 42 in 30% of
// rows.
func skewedInt(rng *rand.Rand, _ int) any {
	switch p := rng.Float64(); {
	case p < 0.1:
		return nil
	case p < 0.4:
		return int64(42)
	}
	return int64(rng.IntN(100) - 50)
}

func floatWithNaN(rng *rand.Rand, _ int) any {
	switch rng.IntN(10) {
	case 0:
		return nil
	case 1:
		return math.NaN()
	}
	return float64(rng.IntN(1000)) / 8
}

// setIndexLess orders keys as set-index does: nulls and NaNs last.
func setIndexLess(a, b any) bool {
	missing := func(v any) bool { f, ok := v.(float64); return v == nil || ok && math.IsNaN(f) }
	if missing(a) || missing(b) {
		return !missing(a) && missing(b)
	}
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case float64:
		return a < b.(float64)
	}
	return a.(string) < b.(string)
}

// readDivisions reads divisions.json from the output directory.
func readDivisions(t *testing.T, dir string) []any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "divisions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ Divisions []any }
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d.Divisions
}

// checkSetIndex checks that the output, read in file order, is exactly the
// input stably sorted by col (nulls last), and that partition p holds only
// keys in [div[p-1], div[p]).
func checkSetIndex(t *testing.T, in []dfRow, dir, col string, parts int) {
	t.Helper()
	want := append([]dfRow(nil), in...)
	sort.SliceStable(want, func(i, j int) bool { return setIndexLess(want[i][col], want[j][col]) })
	got, _ := readDFOutput(t, dir, parts)
	divs := readDivisions(t, dir)
	if len(divs) != parts-1 {
		t.Fatalf("%d divisions for %d partitions", len(divs), parts)
	}
	i := 0
	for p, rows := range got {
		for _, row := range rows {
			if i >= len(want) || fmt.Sprint(row["id"]) != fmt.Sprint(want[i]["id"]) {
				t.Fatalf("row %d (partition %d) has id %v key %v, want id %v key %v", i, p, row["id"], row[col], want[i]["id"], want[i][col])
			}
			checkDivision(t, row[col], divs, p)
			i++
		}
	}
	if i != len(want) {
		t.Fatalf("%d rows out, want %d", i, len(want))
	}
}

// checkDivision checks that key k belongs in partition p.
func checkDivision(t *testing.T, k any, divs []any, p int) {
	t.Helper()
	div := func(i int) any {
		if f, ok := divs[i].(float64); ok {
			if _, isInt := k.(int64); isInt {
				return int64(f)
			}
		}
		return divs[i]
	}
	if f, ok := k.(float64); k == nil || ok && math.IsNaN(f) {
		if p != len(divs) {
			t.Fatalf("null key in partition %d, want the last (%d)", p, len(divs))
		}
		return
	}
	if p > 0 && setIndexLess(k, div(p-1)) || p < len(divs) && !setIndexLess(k, div(p)) {
		t.Fatalf("key %v in partition %d, outside divisions %v", k, p, divs)
	}
}

var setIndexCols = []dfCol{{"id", arrow.PrimitiveTypes.Int64, seqID}, {"k", arrow.PrimitiveTypes.Int64, skewedInt},
	{"f", arrow.PrimitiveTypes.Float64, floatWithNaN}, {"name", arrow.BinaryTypes.String, nameOf("s")}}

func TestSetIndex(t *testing.T) {
	nodes := startTestCluster(t)
	in := t.TempDir()
	rows := writeDFFiles(t, in, "in", 5, 200, setIndexCols, 11)
	glob := filepath.Join(in, "*.parquet")
	cases := []struct {
		name  string
		args  []string
		col   string
		parts int
	}{
		{"sampled int64 with a skewed key", []string{"--column", "k", "--partitions", "8"}, "k", 8},
		{"sampled float64 with NaN, small sample", []string{"--column", "f", "--partitions", "5", "--sample", "10"}, "f", 5},
		{"given string divisions", []string{"--column", "name", "--divisions", `["s1","s2"]`}, "name", 3},
		{"one partition", []string{"--column", "k", "--partitions", "1"}, "k", 1},
		{"more partitions than keys", []string{"--column", "k", "--partitions", "300"}, "k", 300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"--input", glob, "--output", out, "--cluster", nodes[2].APIAddr()}, tc.args...)
			code, stdout, stderr := runCmd(cmdSetIndex, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "divisions    [") {
				t.Errorf("report does not print the divisions:\n%s", stdout)
			}
			checkSetIndex(t, rows, out, tc.col, tc.parts)
		})
	}
}

func TestSetIndexEmbedded(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	rows := writeDFFiles(t, in, "in", 3, 300, setIndexCols, 12)
	code, stdout, stderr := runCmd(cmdSetIndex, "--input", filepath.Join(in, "*.parquet"), "--column", "k",
		"--partitions", "6", "--output", out, "--nodes", "2", "--memory-limit", "32MiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	t.Log("\n" + stdout)
	checkSetIndex(t, rows, out, "k", 6)
	if !strings.Contains(stdout, "files written by the nodes)") {
		t.Errorf("an in-process cluster's nodes should write the files:\n%s", stdout)
	}
}

func TestSetIndexBadInput(t *testing.T) {
	in := t.TempDir()
	writeDFFiles(t, in, "in", 1, 10, setIndexCols, 13)
	nulls := t.TempDir()
	writeDFFiles(t, nulls, "in", 1, 10, []dfCol{{"k", arrow.PrimitiveTypes.Int64, func(*rand.Rand, int) any { return nil }}}, 14)
	glob := filepath.Join(in, "*.parquet")
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"no column", []string{"--input", glob, "--partitions", "2"}, "--column"},
		{"unknown column", []string{"--input", glob, "--column", "nope", "--partitions", "2"}, "nope"},
		{"no input", []string{"--column", "k", "--partitions", "2"}, "--input"},
		{"no partitions", []string{"--input", glob, "--column", "k"}, "--partitions"},
		{"bad divisions", []string{"--input", glob, "--column", "k", "--divisions", "[1,"}, "--divisions"},
		{"unsorted divisions", []string{"--input", glob, "--column", "k", "--divisions", "[5,1]"}, "division"},
		{"string divisions for an int column", []string{"--input", glob, "--column", "k", "--divisions", `["a"]`}, "division"},
		{"partitions and divisions disagree", []string{"--input", glob, "--column", "k", "--divisions", "[1]", "--partitions", "3"}, "disagree"},
		{"all null column", []string{"--input", filepath.Join(nulls, "*"), "--column", "k", "--partitions", "3"}, "--divisions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--output", t.TempDir()}, tc.args...)
			code, stdout, stderr := runCmd(cmdSetIndex, args...)
			t.Log(strings.TrimSpace(stderr))
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.mention) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want 2, nothing, one line mentioning %s", code, stdout, stderr, tc.mention)
			}
		})
	}
}
