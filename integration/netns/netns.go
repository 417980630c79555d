package netns

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sentinel errors of this package.
var (
	// ErrUnavailable: namespaces cannot be made here (not root, no
	// iproute2, or the kernel refuses).
	ErrUnavailable = errors.New("netns: network namespaces unavailable")
	// ErrNoNetem: delay, jitter and loss cannot be emulated (no TUN
	// devices: /dev/net/tun).
	ErrNoNetem = errors.New("netns: link emulation unavailable")
	// ErrBusy: every /24 of 10.201.0.0/16 is taken by live networks.
	ErrBusy = errors.New("netns: no free test subnet")
)

// nsPrefix starts the name of every namespace this package makes:
// shufflenode-<K>-<pid>-<i>.
const nsPrefix = "shufflenode-"

// maxHosts bounds the nodes of one network (addresses .10 to .249).
const maxHosts = 240

// cmdTimeout bounds one ip or tc command.
const cmdTimeout = 20 * time.Second

// Net is one test network. Close removes it.
type Net struct {
	// Subnet is the network's 10.201.K.0/24.
	Subnet string
	// Gateway is the bridge's address, the test process's side.
	Gateway string
	// Hosts are the nodes' namespaces, in order.
	Hosts []*Host

	k         int
	bridge    string
	emu       *emulator
	closeOnce sync.Once
	closeErr  error
}

// Host is one node's namespace and link.
type Host struct {
	// NS is the namespace name (for ip netns exec).
	NS string
	// IP is the node's address.
	IP string
	// Link is the root-namespace end of the node's veth (a bridge port).
	Link string
	// inner is the namespace end of the veth.
	inner string
	// tun is the name of the host's TUN device, once the emulator runs.
	tun string
	emu *emulator
}

// ForTest makes a network of n hosts for t, removed when t ends (after
// the cleanups t registers later). It skips t when namespaces cannot be
// made here and fails it on any other error.
func ForTest(t testing.TB, n int) *Net {
	t.Helper()
	nw, err := New(context.Background(), n)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("multi-host test skipped: %v (run as root on Linux with iproute2: sudo env \"PATH=$PATH\" go test ...)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nw.Close(); err != nil {
			t.Errorf("removing test network: %v", err)
		}
	})
	return nw
}

// New makes a network of n hosts. On error it removes what it made.
func New(ctx context.Context, n int) (*Net, error) {
	if err := available(); err != nil {
		return nil, err
	}
	if n < 1 || n > maxHosts {
		return nil, fmt.Errorf("netns: %d hosts (want 1..%d)", n, maxHosts)
	}
	sweep(ctx)
	nw, err := claimSubnet(ctx)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if err := nw.addHost(ctx, i); err != nil {
			return nil, errors.Join(err, nw.Close())
		}
	}
	return nw, nil
}

// available reports ErrUnavailable unless this process is root and has ip.
func available() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: not root (euid %d)", ErrUnavailable, os.Geteuid())
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not found (install iproute2)", ErrUnavailable, tool)
		}
	}
	return nil
}

// claimSubnet creates the bridge of the first free 10.201.K.0/24: the
// bridge's name sn<K>b is the claim, so two runs never share K.
func claimSubnet(ctx context.Context) (*Net, error) {
	start := os.Getpid() % 250
	for j := range 250 {
		k := 1 + (start+j)%250
		nw := &Net{k: k, bridge: fmt.Sprintf("sn%db", k), emu: newEmulator()}
		err := run(ctx, "ip", "link", "add", nw.bridge, "type", "bridge", "forward_delay", "0")
		if err != nil && strings.Contains(err.Error(), "File exists") {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return nw, nw.upBridge(ctx)
	}
	return nil, ErrBusy
}

// upBridge gives the bridge its address and brings it up.
func (nw *Net) upBridge(ctx context.Context) error {
	nw.Subnet = fmt.Sprintf("10.201.%d.0/24", nw.k)
	nw.Gateway = fmt.Sprintf("10.201.%d.1", nw.k)
	err := runAll(ctx,
		[]string{"ip", "addr", "add", nw.Gateway + "/24", "dev", nw.bridge},
		[]string{"ip", "link", "set", nw.bridge, "up"})
	if err != nil {
		return errors.Join(err, nw.Close())
	}
	return nil
}

// addHost makes namespace i with its veth on the bridge.
func (nw *Net) addHost(ctx context.Context, i int) error {
	h := &Host{
		NS:    fmt.Sprintf("%s%d-%d-%d", nsPrefix, nw.k, os.Getpid(), i),
		IP:    fmt.Sprintf("10.201.%d.%d", nw.k, 10+i),
		Link:  fmt.Sprintf("sn%dh%d", nw.k, i),
		inner: fmt.Sprintf("sn%dn%d", nw.k, i),
		tun:   fmt.Sprintf("sn%dt%d", nw.k, i),
		emu:   nw.emu,
	}
	if err := run(ctx, "ip", "netns", "add", h.NS); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	nw.Hosts = append(nw.Hosts, h)
	nw.emu.add(h)
	return runAll(ctx,
		[]string{"ip", "link", "add", h.Link, "type", "veth", "peer", "name", h.inner},
		[]string{"ip", "link", "set", h.inner, "netns", h.NS},
		[]string{"ip", "link", "set", h.Link, "master", nw.bridge},
		[]string{"ip", "link", "set", h.Link, "up"},
		h.exec("ip", "addr", "add", h.IP+"/24", "dev", h.inner),
		h.exec("ip", "link", "set", h.inner, "up"),
		h.exec("ip", "link", "set", "lo", "up"))
}

// exec returns argv run inside h's namespace.
func (h *Host) exec(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", h.NS}, argv...)
}

// Command returns a command that runs name with args inside h's
// namespace (ip netns exec). The caller starts and waits for it.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	argv := h.exec(append([]string{name}, args...)...)
	return exec.Command(argv[0], argv[1:]...)
}

// Addr returns h's address with port: "10.201.K.x:port".
func (h *Host) Addr(port int) string { return fmt.Sprintf("%s:%d", h.IP, port) }

// Close removes the hosts' links and namespaces and the bridge. Processes
// still running in a namespace keep it alive (unreachable): stop them
// first. Idempotent.
func (nw *Net) Close() error {
	nw.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		errs := []error{nw.emu.close()}
		for _, h := range nw.Hosts {
			errs = append(errs, ignoreMissing(run(ctx, "ip", "link", "del", h.Link)))
			errs = append(errs, ignoreMissing(run(ctx, "ip", "netns", "del", h.NS)))
		}
		errs = append(errs, ignoreMissing(run(ctx, "ip", "link", "del", nw.bridge)))
		nw.closeErr = errors.Join(errs...)
	})
	return nw.closeErr
}

// ignoreMissing drops the error of deleting what is already gone.
func ignoreMissing(err error) error {
	if err != nil && (strings.Contains(err.Error(), "Cannot find device") || strings.Contains(err.Error(), "No such file")) {
		return nil
	}
	return err
}

// run runs one command and returns its output in the error if it fails.
func run(ctx context.Context, argv ...string) error {
	ctx, cancel := context.WithTimeout(ctx, cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// runAll runs the commands in order and stops at the first error.
func runAll(ctx context.Context, cmds ...[]string) error {
	for _, argv := range cmds {
		if err := run(ctx, argv...); err != nil {
			return err
		}
	}
	return nil
}
