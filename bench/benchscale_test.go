package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/job"
)

// TestBenchScaleArray runs the array cases of bench scale on a small array
// (each run checks every element) and checks that both rows are printed,
// the reference with ratio 1.00 and the one-element case with its goal.
func TestBenchScaleArray(t *testing.T) {
	var out bytes.Buffer
	cc := job.ClusterConfig{Nodes: 2, MemoryLimit: 64 << 20}
	if err := BenchScaleArray(context.Background(), &out, cc, ArrayScaleConfig{Rows: 30, Cols: 20}, 1); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("bench scale array printed %d lines, want a header and 2 rows:\n%s", len(lines), out.String())
	}
	if ref := lines[1]; !strings.Contains(ref, "(30,20) (10,20)->(30,10)") || !strings.Contains(ref, " 1.00 ") {
		t.Errorf("reference row %q: want (10,20)->(30,10) at ratio 1.00", ref)
	}
	if row := lines[2]; !strings.Contains(row, "(1,20)->(30,1)") || !strings.Contains(row, ">=0.5") {
		t.Errorf("one-element row %q: want (1,20)->(30,1) with goal >=0.5", row)
	}
}
