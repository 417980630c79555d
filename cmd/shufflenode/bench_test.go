package main

import (
	"os"
	"strings"
	"testing"
)

// TestBenchQuick runs the benchmark of record at a tiny scale with every
// job and checks that it completes and prints every row (never the times).
func TestBenchQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every bench job")
	}
	code, out, errs := runCmd(cmdBench, "--quick", "0.001", "--jobs", "demo,rows,array,redistribute,merge,setindex", "--nodes", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"memory: Go copy", "libp2p: 1 TLS stream", "Flight: 1 DoPut stream",
		"Parquet: write", "Parquet: read,", "Parquet: read+write, all", "\ndemo ", "\nrows ", "\narray f8 ", "\nredistribute f8 ", "merge ", "skew 0.3", "set-index ", " faults ", "\nfaults: minor page faults",
		"\nmemory: first touch, 4 KiB pages", "\nfirst touch: ",
		"\nfresh: demo ", "\nfresh: set-index ", "\nfresh: each job's"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\nmemory: first touch, "); n != 2 { // the second says huge pages, or that there are none
		t.Errorf("%d first-touch ceilings, want 2:\n%s", n, out)
	}
	if rows := strings.Count(out, "\n"); rows != 1+1+1+3+3+1+1+8+3+8+6 {
		t.Errorf("%d lines, want 36:\n%s", rows, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if parquet := strings.HasPrefix(line, "merge ") || strings.HasPrefix(line, "set-index "); parquet != strings.HasSuffix(line, " Parquet") {
			t.Errorf("a merge or set-index row not over the Parquet bound, or another row over it: %q", line)
		}
	}
}

// TestBenchCases runs bench shuffle and bench recovery on tiny data.
func TestBenchCases(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo eleven times")
	}
	for name, cases := range map[string]int{"shuffle": 3, "recovery": 8} {
		code, out, errs := runCmd(cmdBench, name, "--data", "256KiB", "--tasks", "8", "--partitions", "8", "--nodes", "3")
		if code != 0 {
			t.Fatalf("bench %s: exit %d: %s", name, code, errs)
		}
		if n := strings.Count(out, "\n"); n != 1+cases {
			t.Errorf("bench %s: %d lines, want %d:\n%s", name, n, 1+cases, out)
		}
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"--jobs", "demo,nope"}, {"--quick", "-1"}, {"--repeat", "-1"}} {
		if code, _, _ := runCmd(cmdBench, args...); code != 2 {
			t.Errorf("bench %v: exit %d, want 2", args, code)
		}
	}
}

// asBinaryEnv makes the test binary run as shufflenode (TestMain): bench
// --processes execs os.Executable, which in a test is the test binary.
const asBinaryEnv = "BENCH_TEST_AS_SHUFFLENODE"

func TestMain(m *testing.M) {
	if os.Getenv(asBinaryEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestBenchProcesses runs bench on two serve processes (this test binary
// as shufflenode) and checks a line per process under each job.
func TestBenchProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts serve processes")
	}
	t.Setenv(asBinaryEnv, "1")
	code, out, errs := runCmd(cmdBench, "--processes", "2", "--quick", "0.001", "--memory-limit", "64MiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "\n  serve-"); n != 4 {
		t.Errorf("%d serve lines, want 2 per job (demo, array):\n%s", n, out)
	}
}

// TestBenchRecoveryProcesses runs bench recovery with --processes (this
// test binary as shufflenode): after the in-process table, a drained node
// of serve processes replays nothing and a killed one some.
func TestBenchRecoveryProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts serve processes")
	}
	t.Setenv(asBinaryEnv, "1")
	// Two puts at a time of 24: when the node leaves (before task 12), ten
	// or more tasks finished, some with data on it.
	code, out, errs := runCmd(cmdBench, "recovery", "--processes", "3", "--data", "512KiB", "--tasks", "24", "--partitions", "8", "--nodes", "3", "--parallel", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var drained, killed []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "drained (SIGTERM)"):
			drained = strings.Fields(l)
		case strings.HasPrefix(l, "killed (SIGKILL)"):
			killed = strings.Fields(l)
		}
	}
	// name (3 fields), seconds, puts, replay, moved (2 fields)
	if len(drained) != 8 || len(killed) != 8 {
		t.Fatalf("no drain and kill rows:\n%s", out)
	}
	if drained[5] != "0" {
		t.Errorf("the drained node's tasks were replayed: %v", drained)
	}
	// How much a kill replays depends on when the node dies against the
	// puts (on a loaded machine the puts of so small a job may all have
	// ended): the row is printed, every row was verified (exit 0).
	t.Logf("killed: %v", killed)
}
