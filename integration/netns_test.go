package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/integration/netns"
)

// The multi-host tests run each serve process in its own network
// namespace (see integration/netns): root only, skipped otherwise. Every
// process binds 0.0.0.0 inside its namespace and advertises its own
// address, so they also check --advertise.

// Ports of every namespaced node (each namespace has its own ports).
const (
	nsGossipPort = 7946
	nsAPIPort    = 7947
	nsAdminPort  = 7948
	nsP2PPort    = 7949
)

// nsRejoin is the --rejoin-interval of the namespaced nodes.
const nsRejoin = time.Second

// nsCluster is n serve processes, one per host of a test network.
type nsCluster struct {
	*procCluster
	net *netns.Net
}

// startNetns makes a network of n hosts and runs a serve process on each
// (node 0 first, the others joining it), waiting until all list each
// other. The processes are killed, then the network removed, when t ends.
func startNetns(t *testing.T, n int) *nsCluster {
	t.Helper()
	return startNetnsWith(t, n, nil)
}

// startNetnsWith is startNetns with extra serve flags on every node (they
// override the defaults of spawnIn).
func startNetnsWith(t *testing.T, n int, extra []string) *nsCluster {
	t.Helper()
	bin := shufflenodeBinary(t)
	nw := netns.ForTest(t, n)
	dir := t.TempDir()
	c := &nsCluster{procCluster: &procCluster{procs: make([]*proc, n)}, net: nw}
	t.Cleanup(func() { c.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, h := range nw.Hosts {
		var err error
		if c.procs[i], err = spawnIn(h, bin, dir, fmt.Sprintf("ns-%d", i), c.seed(i), extra); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // the seed serves before the others join it
			if err := waitMembers(ctx, c.procs[0], 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range c.procs {
		if err := waitMembers(ctx, p, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.checkMembers(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.probe(); err != nil {
		t.Fatal(err)
	}
	return c
}

// seed is the --join of node i: node 0's gossip address, none for node 0.
func (c *nsCluster) seed(i int) string {
	if i == 0 {
		return ""
	}
	return c.net.Hosts[0].Addr(nsGossipPort)
}

// spawnIn execs `shufflenode serve` for name inside h's namespace, bound
// to 0.0.0.0 there and advertising h's address, its admin port on h's
// address (for the test process's scrapes), then the extra flags. Without
// security flags (sec) its API is insecure (--insecure-api); with them, as
// they say.
func spawnIn(h *netns.Host, bin, dir, name, join string, extra []string, sec ...string) (*proc, error) {
	p := &proc{name: name, api: h.Addr(nsAPIPort), gossip: h.Addr(nsGossipPort),
		log: filepath.Join(dir, name+".stderr"), exited: make(chan struct{})}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	keys, err := clusterKeys(dir)
	if err != nil {
		return nil, err
	}
	p.cmd = h.Command(bin, "serve", "--profile", "local", "--name", name,
		"--data-dir", filepath.Join(dir, name), "--advertise", h.IP,
		"--gossip", fmt.Sprintf("0.0.0.0:%d", nsGossipPort), "--api", fmt.Sprintf("0.0.0.0:%d", nsAPIPort),
		"--listen", fmt.Sprintf("/ip4/0.0.0.0/tcp/%d", nsP2PPort), "--admin", h.Addr(nsAdminPort),
		"--join", join, "--rejoin-interval", nsRejoin.String(), "--memory-limit", "64MiB", "--log-level", "info")
	p.cmd.Args = append(append(append(p.cmd.Args, keys...), extra...), sec...)
	p.cmd.Stderr = logf
	p.cmd.Env = nsEnv(len(sec) == 0)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s in %s: %w", name, h.NS, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// clusterKeys writes the gossip and network keys of the cluster whose
// processes keep their files under dir (the same keys for every node of
// it, derived from dir, so nodes started at once agree without a race) and
// returns serve's flags naming them: a node gossiping and serving peers on
// a namespace address needs both (serve refuses an open cluster).
func clusterKeys(dir string) ([]string, error) {
	sum := sha256.Sum256([]byte(dir))
	key := []byte(hex.EncodeToString(sum[:16])) // 32 bytes: a key for both
	gossip, network := filepath.Join(dir, "gossip.key"), filepath.Join(dir, "network.key")
	for _, f := range []string{gossip, network} {
		w, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // an earlier node's: never rewritten under a reader
		}
		if err != nil {
			return nil, err
		}
		_, err = w.Write(key)
		if err = errors.Join(err, w.Close()); err != nil {
			return nil, err
		}
	}
	return []string{"--gossip-key", gossip, "--network-key", network}, nil
}

// nsEnv is the environment of a namespaced serve process: no SHUFFLENODE_
// variables of the test's own, and if insecure an API on a non-loopback
// address without TLS allowed (serve ignores variables it has no flag for).
func nsEnv(insecure bool) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHUFFLENODE_") })
	if !insecure {
		return env
	}
	return append(env, "SHUFFLENODE_INSECURE_API=true")
}

// others lists the indexes of every process but skip.
func (c *nsCluster) others(skip int) []int {
	var out []int
	for i := range c.procs {
		if i != skip {
			out = append(out, i)
		}
	}
	return out
}

// cutAt returns a BeforeInput hook that cuts h's link before input task
// at (once) and heals it after d; wait waits for the heal. Tasks after at
// start only once the cut is in place: cutting takes a few commands (tens
// of milliseconds on a loaded machine), in which the client's other
// workers would otherwise finish more tasks with the victim still
// reachable than the replay bounds allow (seen in CI: a replay set of 13,
// want at most 12).
func cutAt(t *testing.T, h *netns.Host, at int, d time.Duration) (hook func(int), wait func()) {
	var healed sync.WaitGroup
	healed.Add(1)
	cut := make(chan struct{})
	first := onceAt(at, func() {
		defer close(cut)
		ctx := context.Background()
		if err := h.Cut(ctx); err != nil {
			t.Error(err)
		}
		time.AfterFunc(d, func() {
			defer healed.Done()
			if err := h.Heal(ctx); err != nil {
				t.Error(err)
			}
		})
	})
	hook = func(i int) {
		first(i)
		if i > at {
			select { // a run that fails before task at must not hang here
			case <-cut:
			case <-time.After(time.Minute):
			}
		}
	}
	return hook, healed.Wait
}

// waitListed polls observer until it lists name (or not, if listed is
// false), for up to limit.
func waitListed(observer *proc, name string, listed bool, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cl, err := client.Dial(observer.api)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		ms, err := cl.Members(ctx)
		if err == nil && hasMember(ms, name) == listed {
			return nil
		}
		if !sleep(ctx, 50*time.Millisecond) {
			return fmt.Errorf("%s: %s listed %v not seen within %v (last error %v)", observer.name, name, listed, limit, err)
		}
	}
}

// TestNetnsShuffle runs the demo shuffle, an array rechunk and a merge
// over 4 namespaces, each verified exactly once: plain, then with 20 ms
// +/- 5 ms of latency and 1% loss on every link (the link emulator of
// integration/netns: about 40 ms one way between two nodes). It logs the
// times of both runs.
func TestNetnsShuffle(t *testing.T) {
	t.Parallel()
	c := startNetns(t, 4)
	var plain, shaped nsTimes
	t.Run("plain", func(t *testing.T) { plain = nsWorkloads(t, c, "plain", 1) })
	t.Run("latency and loss", func(t *testing.T) {
		shapeAll(t, c.net, netns.Shape{Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond, Loss: 0.01})
		shaped = nsWorkloads(t, c, "shaped", 3)
	})
	t.Logf("4 namespaces, plain vs 20 ms +/- 5 ms and 1%% loss per link: demo %.1f s vs %.1f s, array %.1f s vs %.1f s, merge %.1f s vs %.1f s",
		plain.demo, shaped.demo, plain.array, shaped.array, plain.merge, shaped.merge)
}

// shapeAll shapes every host's link, skipping t where that cannot be
// emulated (no TUN devices); the shapes are removed when t ends.
func shapeAll(t *testing.T, nw *netns.Net, s netns.Shape) {
	t.Helper()
	ctx := context.Background()
	for _, h := range nw.Hosts {
		err := h.Shape(ctx, s)
		if errors.Is(err, netns.ErrNoNetem) {
			t.Skipf("skipped: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Unshape(ctx) })
	}
}

// TestNetnsShortPartition cuts one node (not the coordinator) off for 1 s
// during the puts, shorter than failure detection: it comes back and the
// shuffle finishes exactly once with no replay (epoch 0). The client
// talks to the other nodes only.
func TestNetnsShortPartition(t *testing.T) {
	t.Parallel()
	c := startNetns(t, 4)
	const victim = 2
	cfg := procDemo("ns-short", 4)
	hook, healed := cutAt(t, c.net.Hosts[victim], procTasks/3, time.Second)
	cfg.BeforeInput = hook
	rep, err := runDemo(t, c.apis(c.others(victim)...), cfg)
	healed()
	checkRecovered(t, rep, err, 0, 0, 0)
}

// nsLongCut is how long TestNetnsLongPartition cuts its node off: longer
// than failure detection on both sides (the cut-off node's suspicions of
// the others last up to 18 s with the local timers) and than memberlist's
// gossip to the dead (15 s), so only the re-join of its seed brings it back.
const nsLongCut = 25 * time.Second

// TestNetnsLongPartition cuts one node (not the coordinator) off during
// the puts for longer than failure detection: it is declared lost, the
// tasks whose data it held are replayed and the shuffle finishes exactly
// once one epoch later. Once its link is back, it re-joins the cluster
// through its seed (--rejoin-interval) and takes part in a new shuffle,
// verified exactly once. Back, the victim must forget the old shuffle
// (which the client closed while it could not hear) within nsForgetWithin
// of the re-join: it asks the shuffle's coordinator candidates
// (failover/rejoin.go) when it sees them come back and every 10 s.
func TestNetnsLongPartition(t *testing.T) {
	t.Parallel()
	c := startNetns(t, 4)
	const victim = 2
	at := procTasks / 3
	cfg := procDemo("ns-long", 5)
	hook, healed := cutAt(t, c.net.Hosts[victim], at, nsLongCut)
	cfg.BeforeInput = hook
	rep, err := runDemo(t, c.apis(c.others(victim)...), cfg)
	// A cut is not a kill: the puts in flight on the other goroutines keep
	// going while the victim is cut off, so one more task than after a kill
	// can have reached it and be done (seen in CI: 12 with at=8, parallel 4).
	lo, hi := replayBounds(at, procParallel, procTasks)
	checkRecovered(t, rep, err, 1, lo, hi+1)
	healed()
	waitRejoined(t, c, victim)
	awaitForgotten(t, c, cfg.ID, nsForgetWithin)
	rep, err = runDemo(t, c.apis(), procDemo("ns-after", 6))
	if err != nil {
		t.Fatalf("shuffle after the re-join: %v", err)
	}
	if rep.Epoch > 0 {
		t.Logf("the shuffle after the re-join lost a member for a moment (epoch %d, replay set %d): see docs/operations.md, Failure detection", rep.Epoch, rep.ReplaySet)
	}
}

// nsForgetWithin bounds how long after its re-join a node that was cut off
// may hold a shuffle that was closed without it: its check when it sees the
// others come back, or failing that the next periodic one (10 s).
const nsForgetWithin = 20 * time.Second

// awaitForgotten waits up to within until no node holds shuffle id.
func awaitForgotten(t *testing.T, c *nsCluster, id string, within time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		held := heldBy(c, id)
		if len(held) == 0 {
			t.Logf("every node forgot %s %.1f s after the re-join", id, time.Since(start).Seconds())
			return
		}
		if time.Since(start) > within {
			t.Errorf("%v still hold shuffle %s %s after the re-join", held, id, within)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waitRejoined waits until every node lists the victim and it lists them
// all again, and checks that its seed's re-join brought it back.
func waitRejoined(t *testing.T, c *nsCluster, victim int) {
	t.Helper()
	start := time.Now()
	for _, i := range c.others(victim) {
		if err := waitListed(c.procs[i], c.procs[victim].name, true, 30*time.Second); err != nil {
			t.Fatalf("after the heal: %v", err)
		}
	}
	if err := waitMembers(context.Background(), c.procs[victim], len(c.procs)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s listed by every node %.1f s after the heal", c.procs[victim].name, time.Since(start).Seconds())
	if !strings.Contains(tail(c.procs[victim].log, 200), "re-joined the cluster") {
		t.Errorf("%s is back without a re-join of its seed", c.procs[victim].name)
	}
}
