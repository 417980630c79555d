package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
)

// The shufflenode binary the process tests run, built once per test binary
// (see TestMain) into binDir.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	binErr    error
)

// TestMain removes the shufflenode binary built by the process tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// shufflenodeBinary builds ./cmd/shufflenode of this module once and
// returns its path; process tests skip under -short.
func shufflenodeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process tests build and run the shufflenode binary: skipped with -short")
	}
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "shufflenode-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "shufflenode")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/shufflenode")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/shufflenode: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// moduleRoot walks up from the working directory to the directory of go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// proc is one `shufflenode serve` process.
type proc struct {
	name, api, gossip string
	log               string // its stderr
	cmd               *exec.Cmd
	exited            chan struct{} // closed once the process is reaped
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// alive reports whether the process still runs.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// procCluster is n serve processes on 127.0.0.1 that joined one cluster.
type procCluster struct {
	procs []*proc
}

// apis lists the API addresses of the processes at idx (all if none given).
func (c *procCluster) apis(idx ...int) []string {
	if len(idx) == 0 {
		for i := range c.procs {
			idx = append(idx, i)
		}
	}
	out := make([]string, len(idx))
	for j, i := range idx {
		out[j] = c.procs[i].api
	}
	return out
}

// byAPI returns the index of the process serving api, or -1.
func (c *procCluster) byAPI(api string) int {
	for i, p := range c.procs {
		if p.api == api {
			return i
		}
	}
	return -1
}

// startProcs runs n serve processes (proc-0 first, the rest joining it)
// and waits until every one lists all n members. Every process is killed
// when the test ends; on failure the tail of each one's stderr is logged.
func startProcs(t *testing.T, n int) *procCluster {
	t.Helper()
	bin := shufflenodeBinary(t)
	dir := t.TempDir()
	c := &procCluster{procs: make([]*proc, n)}
	t.Cleanup(func() { c.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	if c.procs[0], err = startProc(ctx, bin, dir, "proc-0", ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 1; i < n; i++ {
		wg.Go(func() { c.procs[i], errs[i] = startProc(ctx, bin, dir, fmt.Sprintf("proc-%d", i), c.procs[0].gossip) })
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
	return c
}

// stop kills every process still running and, if the test failed, logs
// the tail of each one's stderr.
func (c *procCluster) stop(t *testing.T) {
	for _, p := range c.procs {
		if p != nil && p.alive() {
			p.kill()
		}
	}
	if !t.Failed() {
		return
	}
	for _, p := range c.procs {
		if p != nil {
			t.Logf("--- %s (api %s) stderr, last lines:\n%s", p.name, p.api, tail(p.log, 40))
		}
	}
}

// startProc starts one serve process on free ports, retrying with other
// ports if one was taken meanwhile, and waits until its API answers.
// The process is returned even on error (nil if it never started), so that
// its stderr can be shown.
func startProc(ctx context.Context, bin, dir, name, join string) (p *proc, err error) {
	for range 5 {
		if p, err = spawn(bin, dir, name, join); err != nil {
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

// spawn execs `shufflenode serve` for name with fresh ports.
func spawn(bin, dir, name, join string) (*proc, error) {
	gossip, api := freePort(), freePort()
	if gossip == "" || api == "" || gossip == api {
		return nil, errors.New("no free port on 127.0.0.1")
	}
	p := &proc{name: name, api: api, gossip: gossip, log: filepath.Join(dir, name+".stderr"), exited: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p.cmd = exec.Command(bin, "serve", "--profile", "local", "--name", name,
		"--data-dir", filepath.Join(dir, name), "--gossip", gossip, "--api", api, "--admin", "",
		"--join", join, "--memory-limit", "64MiB", "--log-level", "info")
	p.cmd.Stderr = logf
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// freePort returns a 127.0.0.1:port free for TCP and UDP at the time of
// the call (memberlist binds both), or "".
func freePort() string {
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		l.Close()
		if err == nil {
			u.Close()
			return addr
		}
	}
	return ""
}

// waitMembers polls p's members action until it lists n members or more.
func waitMembers(ctx context.Context, p *proc, n int) error {
	cl, err := client.Dial(p.api)
	if err != nil {
		return err
	}
	defer cl.Close()
	var last error
	for {
		ms, err := cl.Members(ctx)
		if err == nil && len(ms) >= n {
			return nil
		}
		last = err
		if err == nil {
			last = fmt.Errorf("%d members", len(ms))
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited while starting: %s", p.name, tail(p.log, 10))
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for %d members: %v (last: %v)", p.name, n, ctx.Err(), last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}

// hasMember reports whether ms lists a member called name.
func hasMember(ms []api.Member, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}
