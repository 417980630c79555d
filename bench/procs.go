package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/job"
)

// ProcsConfig is a cluster of real `shufflenode serve` processes on
// 127.0.0.1, each with its own temporary data directory and free ports.
type ProcsConfig struct {
	Binary      string   // the shufflenode binary (the caller's os.Executable)
	Env         []string // the processes' environment (nil: this process's)
	Processes   int
	MemoryLimit int64    // --memory-limit of each
	OutputRoots []string // --output-root of each (none: the processes write no job output)
	InputRoots  []string // --input-root of each (none: the processes read no job input)
	LogLevel    string   // --log-level of each ("": warn)
}

// Procs is a running cluster of serve processes.
type Procs struct {
	dir   string
	procs []*serveProc
}

// serveProc is one serve process.
type serveProc struct {
	name, api, log string
	cmd            *exec.Cmd
	exited         chan struct{}
}

// StartProcs starts c.Processes serve processes, the first alone and the
// others joining it, and waits until the first lists them all. Close stops
// them.
func StartProcs(ctx context.Context, c ProcsConfig) (*Procs, error) {
	dir, err := os.MkdirTemp("", "shufflenode-bench-procs-")
	if err != nil {
		return nil, err
	}
	p := &Procs{dir: dir}
	if err := p.start(ctx, c); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// start starts the processes one at a time, each joining the first and
// serving before the next starts, and waits until the first lists them
// all.
func (p *Procs) start(ctx context.Context, c ProcsConfig) error {
	join := ""
	for i := range c.Processes {
		sp, gossip, err := startReady(ctx, c, p.dir, fmt.Sprintf("serve-%d", i), join)
		if sp != nil {
			p.procs = append(p.procs, sp)
		}
		if err != nil {
			return err
		}
		if i == 0 {
			join = gossip
		}
	}
	return p.waitMembers(ctx, len(p.procs))
}

// startReady starts a serve process and waits until its API answers. A
// process that exits because a port FreePorts chose was taken in between
// (by any process's ephemeral socket) is started again on new ports, up
// to 5 times.
func startReady(ctx context.Context, c ProcsConfig, dir, name, join string) (*serveProc, string, error) {
	for try := 1; ; try++ {
		sp, gossip, err := startServe(c, dir, name, join)
		if err != nil {
			return nil, "", err
		}
		err = sp.waitServing(ctx)
		if err == nil || try == 5 || !strings.Contains(tail(sp.log, 2000), "address already in use") {
			return sp, gossip, err
		}
	}
}

// waitServing waits until the process's API answers, or it exits.
func (sp *serveProc) waitServing(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		select {
		case <-sp.exited:
			return fmt.Errorf("%w: %s exited: %s", ErrProcs, sp.name, tail(sp.log, 400))
		default:
		}
		if _, err := job.ClusterMembers(ctx, sp.api, flightproto.ClientAuth{}); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s does not serve its API at %s: %w", ErrProcs, sp.name, sp.api, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Addr is the API address of the first process (the coordinator).
func (p *Procs) Addr() string { return p.procs[0].api }

// PIDs lists the processes' ids in start order.
func (p *Procs) PIDs() []int {
	out := make([]int, len(p.procs))
	for i, sp := range p.procs {
		out[i] = sp.cmd.Process.Pid
	}
	return out
}

// startServe execs one serve process with fresh ports; it returns the
// process and its gossip address.
func startServe(c ProcsConfig, dir, name, join string) (*serveProc, string, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, "", err
	}
	sp := &serveProc{name: name, api: ports[1], log: filepath.Join(dir, name+".log"), exited: make(chan struct{})}
	logf, err := os.Create(sp.log)
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	sp.cmd = exec.Command(c.Binary, "serve", "--profile", "local", "--name", name,
		"--data-dir", filepath.Join(dir, name), "--gossip", ports[0], "--api", ports[1], "--admin", "",
		"--join", join, "--memory-limit", strconv.FormatInt(c.MemoryLimit, 10), "--log-level", cmp.Or(c.LogLevel, "warn"),
		"--output-root", strings.Join(c.OutputRoots, ","), "--input-root", strings.Join(c.InputRoots, ","))
	sp.cmd.Stdout, sp.cmd.Stderr, sp.cmd.Env = logf, logf, c.Env
	if err := sp.cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("%w: starting %s: %w", ErrProcs, name, err)
	}
	go func() { _ = sp.cmd.Wait(); close(sp.exited) }()
	return sp, ports[0], nil
}

// waitMembers waits until the first process lists n members.
func (p *Procs) waitMembers(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		for _, sp := range p.procs {
			select {
			case <-sp.exited:
				return fmt.Errorf("%w: %s exited: %s", ErrProcs, sp.name, tail(sp.log, 400))
			default:
			}
		}
		if addrs, err := job.ClusterMembers(ctx, p.Addr(), flightproto.ClientAuth{}); err == nil && len(addrs) == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d processes did not form one cluster of %d: %w", ErrProcs, len(p.procs), n, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close stops every process (SIGTERM, then SIGKILL after 10 s) and
// removes their directory. Idempotent.
func (p *Procs) Close() {
	for _, sp := range p.procs {
		_ = sp.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, sp := range p.procs {
		select {
		case <-sp.exited:
		case <-time.After(10 * time.Second):
			_ = sp.cmd.Process.Kill()
			<-sp.exited
		}
	}
	p.procs = nil
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
		p.dir = ""
	}
}

// tail returns the last n bytes of the file at path.
func tail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		_, _ = f.Seek(st.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

// FreePorts returns n distinct 127.0.0.1:port addresses free for TCP and
// UDP (gossip binds both) when chosen; all are held until the last is
// found so none is handed out twice. Tests that start serve processes use
// it too.
func FreePorts(n int) ([]string, error) {
	var addrs []string
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for tries := 0; len(addrs) < n; tries++ {
		if tries == 50*n {
			return nil, fmt.Errorf("%w: no free port on 127.0.0.1", ErrProcs)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			continue
		}
		held = append(held, l)
		u, err := net.ListenPacket("udp", l.Addr().String())
		if err != nil {
			continue
		}
		held = append(held, u)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}
