package integration

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// startProcsArgs is startProcs with extra serve flags for process i:
// args(i) is appended to the usual command line (nil args: none).
func startProcsArgs(t *testing.T, n int, args func(i int) []string) *procCluster {
	t.Helper()
	bin := shufflenodeBinary(t)
	dir := t.TempDir()
	c := &procCluster{procs: make([]*proc, n), dir: dir, args: args}
	t.Cleanup(func() { c.stop(t) })
	if err := c.start(bin, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := c.probe(); err != nil {
		t.Fatal(err)
	}
	return c
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func (p *proc) peakRSS() (int64, error) {
	return procStatusBytes(p.cmd.Process.Pid, "VmHWM:")
}

// procStatusBytes reads a "kB" field of /proc/<pid>/status.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("pid %d: no %s in /proc status", pid, field)
}
