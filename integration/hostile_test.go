package integration

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shufflenode/shufflenode/bench"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// TestHostileAmplifyingSpec: a create of a few hundred bytes whose cyclic
// axis has 2^23 blocks (planning it took every node to 1.3-1.7 GiB and
// 25-30 CPU-seconds) is refused at once as over the node's run cap, before
// any node plans it; the nodes stay up and small, and a spec just under the
// cap still works.
func TestHostileAmplifyingSpec(t *testing.T) {
	c := startProcs(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := c.procs[1].dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, blocks := range []int64{1 << 23, 1 << 26} {
		start := time.Now()
		err := cl.Create(ctx, cyclicSpec("amplify", blocks))
		if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-runs") {
			t.Fatalf("create of %d cyclic blocks: %v, want ResourceExhausted naming --max-runs", blocks, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("create of %d cyclic blocks took %v to refuse", blocks, d)
		}
	}
	if err := cl.Create(ctx, cyclicSpec("under-cap", 1<<17)); err != nil {
		t.Fatalf("create under the cap: %v", err)
	}
	for _, p := range c.procs {
		if !p.alive() {
			t.Fatalf("%s exited", p.name)
		}
		peak, err := p.peakRSS()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: peak RSS %d MiB", p.name, peak>>20)
		if peak > 400<<20 {
			t.Errorf("%s: peak RSS %d MiB, want under 400 MiB (64 MiB budget)", p.name, peak>>20)
		}
	}
}

// cyclicSpec is a 1-d array of blocks elements dealt one at a time to 4 old
// chunks, rechunked into one new chunk.
func cyclicSpec(id string, blocks int64) *spec.Spec {
	return &spec.Spec{ID: id, Kind: spec.Array, DType: "|u1", Tasks: 4, Partitions: 1,
		OldChunks: spec.Chunks{splitaxes.CyclicSizes(blocks, 4, 1)}, NewChunks: spec.Chunks{{blocks}},
		OldDist: []*splitaxes.Dist{{Type: splitaxes.Cyclic, Size: blocks, BlockSize: 1}}}
}

// TestHostileOpenCluster: serve refuses to gossip or serve peer streams on
// an address other hosts can reach without the cluster's keys (without the
// gossip key any process that reached the gossip port joined, and could
// close other clients' shuffles and own partitions of new ones), and says
// how to go on; --insecure-cluster lets it past that check. The addresses
// are TEST-NET ones no interface holds: nothing is ever bound off loopback.
func TestHostileOpenCluster(t *testing.T) {
	bin := shufflenodeBinary(t)
	dir := t.TempDir()
	base := []string{"serve", "--profile", "local", "--name", "open", "--data-dir", dir, "--api", "127.0.0.1:0", "--admin", ""}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"gossip without a key", []string{"--gossip", "192.0.2.1:7946"}, 2, "--gossip-key"},
		{"peer streams without a key", []string{"--gossip", "127.0.0.1:0", "--listen", "/ip4/192.0.2.1/tcp/7949"}, 2, "--network-key"},
		{"--insecure-cluster gets past the check", []string{"--gossip", "192.0.2.1:7946", "--insecure-cluster"}, 1, "192.0.2.1"},
		{"profiles on an exposed admin port", []string{"--gossip", "127.0.0.1:0", "--admin", "192.0.2.1:7948", "--pprof"}, 2, "--pprof"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append(slices.Clone(base), tc.args...)...)
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SHUFFLENODE_") })
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
				t.Fatalf("serve %v: %v, want exit code %d naming %s; output:\n%s", tc.args, err, tc.code, tc.want, out)
			}
			if tc.code == 2 && tc.want != "--pprof" && !strings.Contains(string(out), "--insecure-cluster") {
				t.Errorf("the refusal does not say how to go on:\n%s", out)
			}
		})
	}
}

// TestHostileJoinBeforeSeed: a node whose seed is not up yet waits for it
// (nodes started together race their seeds) instead of exiting, and joins
// once the seed comes up.
func TestHostileJoinBeforeSeed(t *testing.T) {
	bin := shufflenodeBinary(t)
	dir := t.TempDir()
	ports, err := bench.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	seed := ports[0]
	c := &procCluster{procs: make([]*proc, 2), dir: dir}
	t.Cleanup(func() { c.stop(t) })
	if c.procs[1], err = spawn(bin, dir, "proc-1", seed, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // several failed joins
	if !c.procs[1].alive() {
		t.Fatalf("proc-1 exited while its seed was down:\n%s", tail(c.procs[1].log, 10))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c.procs[0], err = startProc(ctx, bin, dir, "proc-0", "", "", "--gossip", seed); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.procs {
		if err := waitMembers(ctx, p, 2); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(tail(c.procs[1].log, 200), "trying again") {
		t.Errorf("proc-1 did not log its retries:\n%s", tail(c.procs[1].log, 10))
	}
}
