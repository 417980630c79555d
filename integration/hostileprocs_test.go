package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/bench"
)

// startProcsArgs is startProcs with extra serve flags for process i:
// args(i) is appended to the usual command line (nil args: none).
func startProcsArgs(t *testing.T, n int, args func(i int) []string) *procCluster {
	t.Helper()
	bin := shufflenodeBinary(t)
	dir := t.TempDir()
	c := &procCluster{procs: make([]*proc, n), dir: dir}
	t.Cleanup(func() { c.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	extra := func(i int) []string {
		if args == nil {
			return nil
		}
		return args(i)
	}
	var err error
	if c.procs[0], err = startProcArgs(ctx, bin, dir, "proc-0", "", extra(0)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 1; i < n; i++ {
		wg.Go(func() {
			c.procs[i], errs[i] = startProcArgs(ctx, bin, dir, fmt.Sprintf("proc-%d", i), c.procs[0].gossip, extra(i))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.procs {
		if err := waitMembers(ctx, p, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.probe(); err != nil {
		t.Fatal(err)
	}
	return c
}

// startProcArgs is startProc with extra serve flags.
func startProcArgs(ctx context.Context, bin, dir, name, join string, extra []string) (p *proc, err error) {
	for range 5 {
		if p, err = spawnArgs(bin, dir, name, join, extra); err != nil {
			return nil, err
		}
		if err = waitMembers(ctx, p, 1); err == nil {
			return p, nil
		}
		if p.alive() {
			p.kill()
		}
		if !strings.Contains(tail(p.log, 20), "address already in use") {
			return p, err
		}
	}
	return p, err
}

// spawnArgs execs `shufflenode serve` for name with fresh ports, the flags
// spawn gives and extra after them (a flag given twice: the last wins).
func spawnArgs(bin, dir, name, join string, extra []string) (*proc, error) {
	ports, err := bench.FreePorts(2)
	if err != nil {
		return nil, err
	}
	gossip, api := ports[0], ports[1]
	p := &proc{name: name, api: api, gossip: gossip, log: filepath.Join(dir, name+".stderr"), exited: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := []string{"serve", "--profile", "local", "--name", name,
		"--data-dir", filepath.Join(dir, name), "--gossip", gossip, "--api", api, "--admin", "",
		"--join", join, "--memory-limit", "64MiB", "--log-level", "info", "--output-root", dir, "--input-root", dir}
	p.cmd = exec.Command(bin, append(args, extra...)...)
	p.cmd.Stderr = logf
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "SHUFFLENODE_")
	})
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
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
