package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/npy"
)

// TestRedistributeCommand writes a block-cyclic array with gen-dap,
// redistributes it to regular chunks and then to padded blocks on an
// in-process cluster, and checks every element of every output file
// against its dim_data.
func TestRedistributeCommand(t *testing.T) {
	dir := t.TempDir()
	in, mid, out := filepath.Join(dir, "in"), filepath.Join(dir, "mid"), filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	cyc := `{"proc_grid": [2, 3], "axes": [{"dist_type": "c", "block_size": 4}, {"dist_type": "c", "block_size": 3}]}`
	if code := run([]string{"gen-dap", "--output", in, "--shape", "37,29", "--dist", cyc}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen-dap: %d %s", code, stderr.String())
	}
	for _, step := range []struct{ from, to, target string }{
		{in, mid, `{"chunks": [10, 15]}`},
		{mid, out, `{"proc_grid": [3, 2], "axes": [{"dist_type": "b", "padding": 2}, {"dist_type": "b", "padding": 1}]}`},
	} {
		if code := run([]string{"redistribute", "--input", step.from, "--output", step.to, "--to", step.target, "--nodes", "3"},
			&stdout, &stderr); code != 0 {
			t.Fatalf("redistribute to %s: %d %s", step.target, code, stderr.String())
		}
		checkDAPDir(t, step.to)
	}
}

// checkDAPDir checks that every element of every local array in dir holds
// the global index its dim_data says.
func checkDAPDir(t *testing.T, dir string) {
	t.Helper()
	var ls []dap.Local
	for p := 0; ; p++ {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("proc-%d.json", p)))
		if err != nil {
			break
		}
		c, err := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("proc-%d.npy", p)))
		if err != nil {
			t.Fatal(err)
		}
		l, err := dap.Decode(raw, p, c.Shape)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	d, err := dap.FromLocals(ls)
	if err != nil {
		t.Fatal(err)
	}
	for p := range ls {
		got, _ := npy.ReadFile(filepath.Join(dir, fmt.Sprintf("proc-%d.npy", p)))
		want, err := job.GlobalIndexArray(d, p)
		if err != nil || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("%s process %d: elements differ (%v)", dir, p, err)
		}
	}
}
