package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/bench"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/job"
)

// The shufflenode binary the process tests run, built once per test binary
// (see TestMain) into binDir.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	binErr    error
	// startFailed holds the first time a cluster did not form in time:
	// later ones would fail the same way, so they fail at once instead.
	startFailed atomic.Pointer[string]
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
// returns its path (SHUFFLENODE_BIN names a binary to use instead);
// process tests skip under -short.
func shufflenodeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("process tests build and run the shufflenode binary: skipped with -short")
	}
	if bin := os.Getenv("SHUFFLENODE_BIN"); bin != "" {
		return bin
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
	token             string // its API's bearer token ("" for none)
	cmd               *exec.Cmd
	exited            chan struct{} // closed once the process is reaped
}

// logPath is the file of p's stderr ("" for a process never started).
func (p *proc) logPath() string {
	if p == nil {
		return ""
	}
	return p.log
}

// dial connects a client to p's API, with p's token.
func (p *proc) dial() (*client.Client, error) {
	return client.DialAuth(p.api, flightproto.ClientAuth{Token: p.token})
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
	token string // the API's bearer token of every process ("" for none)
	// tokenFile holds token (absolute; "" for none).
	tokenFile string
	// dir holds the processes' data and logs; they may write job output
	// under it (--output-root), and read their input files there
	// (--input-root).
	dir string
	// args, if set, gives serve flags for process i beyond the usual ones.
	args func(i int) []string
}

// extra is the serve flags of process i beyond the usual ones.
func (c *procCluster) extra(i int) []string {
	if c.args == nil {
		return nil
	}
	return c.args(i)
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
	return startProcsToken(t, n, "")
}

// startProcsToken is startProcs with processes whose API requires token
// (--api-token-file; none if "").
func startProcsToken(t *testing.T, n int, token string) *procCluster {
	t.Helper()
	bin := shufflenodeBinary(t)
	if msg := startFailed.Load(); msg != nil {
		t.Fatalf("not starting processes: an earlier cluster did not form: %s", *msg)
	}
	dir := t.TempDir()
	c := &procCluster{procs: make([]*proc, n), token: token, dir: dir}
	if err := writeToken(dir, token); err != nil {
		t.Fatal(err)
	}
	if token != "" {
		c.tokenFile = tokenFile(dir)
	}
	t.Cleanup(func() { c.stop(t) })
	if err := c.start(bin, dir); err != nil {
		if msg := err.Error(); errors.Is(err, context.DeadlineExceeded) {
			startFailed.CompareAndSwap(nil, &msg)
		}
		t.Fatal(err)
	}
	if tries, err := c.probe(); err != nil {
		t.Fatal(err)
	} else if tries > 1 {
		t.Logf("the cluster took %d tries to create its first shuffle", tries)
	}
	return c
}

// probe creates and closes a tiny shuffle on proc-0 until that works: the
// members agree, but a peer stream between two of them may not be possible
// yet right after they joined (libp2p dial backoff, seen once in 60 runs).
// It returns the tries it took.
func (c *procCluster) probe() (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := c.procs[0].dial()
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	for try := 1; ; try++ {
		sp, err := job.DemoConfig{ID: fmt.Sprintf("probe-%d", try), Rows: 1, Tasks: 1, Partitions: 1}.Spec()
		if err != nil {
			return try, err
		}
		if err = cl.Create(ctx, sp); err == nil {
			return try, cl.CloseShuffle(ctx, sp.ID)
		}
		if !sleep(ctx, 100*time.Millisecond) {
			return try, fmt.Errorf("creating a first shuffle on the new cluster: %w", err)
		}
	}
}

// sleep waits d unless ctx ends first (then false).
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// start runs proc-0, then the others joining it, and waits until every
// one lists them all.
func (c *procCluster) start(bin, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if c.procs[0], err = startProc(ctx, bin, dir, "proc-0", "", c.token, c.extra(0)...); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.procs))
	for i := 1; i < len(c.procs); i++ {
		wg.Go(func() {
			c.procs[i], errs[i] = startProc(ctx, bin, dir, fmt.Sprintf("proc-%d", i), c.procs[0].gossip, c.token, c.extra(i)...)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, p := range c.procs {
		if err := waitMembers(ctx, p, len(c.procs)); err != nil {
			return err
		}
	}
	return c.checkMembers(ctx)
}

// checkMembers fails unless every process lists exactly the cluster's
// processes (a stray member would be another test's cluster).
func (c *procCluster) checkMembers(ctx context.Context) error {
	for _, p := range c.procs {
		cl, err := p.dial()
		if err != nil {
			return err
		}
		ms, err := cl.Members(ctx)
		cl.Close()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if i := c.byAPI(m.APIAddr); i < 0 || c.procs[i].name != m.Name {
				return fmt.Errorf("%s lists a member %s (api %s) that is not one of this cluster's processes", p.name, m.Name, m.APIAddr)
			}
		}
	}
	return nil
}

// stop kills every process still running, fails t if one reported a data
// race or a panic (a binary built with -race, see SHUFFLENODE_BIN) and, if
// the test failed, logs the tail of each one's stderr.
func (c *procCluster) stop(t *testing.T) {
	for _, p := range c.procs {
		if p != nil && p.alive() {
			p.kill()
		}
	}
	for _, p := range c.procs {
		if report := crashReport(p.logPath()); report != "" {
			t.Errorf("%s reported:\n%s", p.name, report)
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
func startProc(ctx context.Context, bin, dir, name, join, token string, extra ...string) (p *proc, err error) {
	for range 5 {
		if p, err = spawn(bin, dir, name, join, token, extra...); err != nil {
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

// tokenFile is where startProcsToken writes the token in a cluster's dir.
func tokenFile(dir string) string { return filepath.Join(dir, "api.token") }

// writeToken writes token to tokenFile(dir), unless it is "".
func writeToken(dir, token string) error {
	if token == "" {
		return nil
	}
	return os.WriteFile(tokenFile(dir), []byte(token+"\n"), 0o600)
}

// spawn execs `shufflenode serve` for name with fresh ports (and the API
// token of tokenFile(dir) unless token is "").
func spawn(bin, dir, name, join, token string, extra ...string) (*proc, error) {
	ports, err := bench.FreePorts(2)
	if err != nil {
		return nil, err
	}
	return spawnAt(bin, dir, name, join, token, ports[0], ports[1], extra...)
}

// spawnAt starts one serve process named name on the given gossip and API
// addresses (its data directory is dir/name), with extra serve flags after
// the ones it gives (a flag given twice: the last wins).
func spawnAt(bin, dir, name, join, token, gossip, api string, extra ...string) (*proc, error) {
	p := &proc{name: name, api: api, gossip: gossip, log: filepath.Join(dir, name+".stderr"), token: token, exited: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	p.cmd = exec.Command(bin, "serve", "--profile", "local", "--name", name,
		"--data-dir", filepath.Join(dir, name), "--gossip", gossip, "--api", api, "--admin", "",
		"--join", join, "--memory-limit", "64MiB", "--log-level", "info", "--output-root", dir, "--input-root", dir)
	if token != "" {
		p.cmd.Args = append(p.cmd.Args, "--api-token-file", tokenFile(dir))
	}
	p.cmd.Args = append(p.cmd.Args, extra...)
	p.cmd.Stderr = logf
	p.cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "SHUFFLENODE_") // serve reads its flags from there too
	})
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// waitMembers polls p's members action until it lists n members or more.
func waitMembers(ctx context.Context, p *proc, n int) error {
	cl, err := p.dial()
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
			return fmt.Errorf("%s: waiting for %d members: %w (last: %v)", p.name, n, ctx.Err(), last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// crashReport returns up to 60 lines of the file at path from its first
// data race or panic report, or "".
func crashReport(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	i := bytes.Index(b, []byte("WARNING: DATA RACE"))
	if j := bytes.Index(b, []byte("panic:")); i < 0 || (j >= 0 && j < i) {
		i = j
	}
	if i < 0 {
		return ""
	}
	lines := bytes.SplitN(b[i:], []byte("\n"), 61)
	return string(bytes.Join(lines[:min(60, len(lines))], []byte("\n")))
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

// onceAt returns a BeforeInput (or BeforeRead) hook that runs fn once,
// before input task (or partition) at.
func onceAt(at int, fn func()) func(int) {
	var once sync.Once
	return func(i int) {
		if i == at {
			once.Do(fn)
		}
	}
}
