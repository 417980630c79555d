package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// BenchShuffle runs the dataframe demo c on fresh clusters at 100 and 1000
// partitions, then at 1000 with a per-node budget of 1/8 of data (so most
// of it spills), and writes one line each to w (bench shuffle).
func BenchShuffle(ctx context.Context, w io.Writer, cc job.ClusterConfig, c job.DemoConfig, data int64) error {
	fmt.Fprintf(w, "%-34s %8s %8s %9s %10s\n", "case", "seconds", "MB/s", "peak RSS", "budget")
	name := func(p int, extra string) string {
		return fmt.Sprintf("%s %d->%d x%d%s", job.FormatBytes(data), c.Tasks, p, cc.Nodes, extra)
	}
	small := cc
	small.MemoryLimit = data / 8
	for _, k := range []struct {
		name  string
		parts int
		cc    job.ClusterConfig
	}{{name(100, ""), 100, cc}, {name(1000, ""), 1000, cc}, {name(1000, " budget/8"), 1000, small}} {
		runtime.GC()
		measure.ResetPeakRSS()
		run := c
		run.Partitions, run.ID = k.parts, fmt.Sprintf("demo-%d", time.Now().UnixNano())
		rep, err := job.RunDemoOn(ctx, k.cc, run)
		if err != nil {
			return fmt.Errorf("bench %s: %w", k.name, err)
		}
		fmt.Fprintf(w, "%-34s %8.2f %8.1f %9s %10s\n", k.name, rep.TotalSeconds, rep.MBps(),
			job.FormatBytes(measure.PeakRSS()), job.FormatBytes(k.cc.MemoryLimit))
	}
	return nil
}

// BenchRecovery runs the demo c eight times on fresh in-process clusters:
// without failure, with one node (not the coordinator) crashed halfway
// through the puts, with the shuffle's coordinator crashed halfway, and with
// one node (not the coordinator) drained halfway (refusing new puts,
// finishing its running ones, then leaving),
// each with replication 1 and 2 (bench recovery). For a coordinator crash
// it also prints the seconds from the crash to the successor's takeover
// being done (the failure detection time plus the rebuild), and the
// rebuild's own seconds (from the takeover's start).
func BenchRecovery(ctx context.Context, w io.Writer, cc job.ClusterConfig, c job.DemoConfig) error {
	fmt.Fprintf(w, "%-42s %8s %8s %7s %7s %9s %9s %8s %9s\n", "case", "seconds", "MB/s", "puts", "replay", "moved", "takeover", "rebuild", "peak RSS")
	for _, k := range recoveryCases() {
		measure.ResetPeakRSS()
		rep, to, moved, err := recoveryRun(ctx, cc, c, k.replication, k.victim)
		if err != nil {
			return fmt.Errorf("bench recovery %s: %w", k.name, err)
		}
		fmt.Fprintf(w, "%-42s %8.2f %8.1f %7d %7d %9s %9s %8s %9s\n", k.name, rep.TotalSeconds, rep.MBps(),
			rep.Attempts, rep.ReplaySet, job.FormatBytes(moved), formatTakeover(to.fromKill), formatTakeover(to.took), job.FormatBytes(measure.PeakRSS()))
	}
	return nil
}

// movedBytes is what recovering from v cost in bytes sent again: the
// drained node's handover, or the input of the puts run again (estimated
// from the mean task size).
func movedBytes(rep job.Report, v victim, handed int64) int64 {
	if v == drained {
		return handed
	}
	return (rep.Attempts - int64(rep.Tasks)) * rep.Bytes / int64(max(rep.Tasks, 1))
}

// victim is which node a recovery case crashes halfway through the puts.
type victim int

const (
	noVictim    victim = iota
	dataNode           // a node that does not coordinate the shuffle
	coordinator        // the shuffle's coordinator
	drained            // a node that does not coordinate the shuffle, drained (drain.go), not crashed
)

// recoveryCase is one row of bench recovery.
type recoveryCase struct {
	name        string
	replication int
	victim      victim
}

// recoveryCases are the rows of bench recovery.
func recoveryCases() []recoveryCase {
	return []recoveryCase{{"no failure", 1, noVictim}, {"one node killed halfway", 1, dataNode},
		{"coordinator killed halfway", 1, coordinator},
		{"replication 2, no failure", 2, noVictim}, {"replication 2, one killed halfway", 2, dataNode},
		{"replication 2, coordinator killed halfway", 2, coordinator},
		{"one node drained halfway", 1, drained}, {"replication 2, one drained halfway", 2, drained}}
}

// formatTakeover prints a crash-to-takeover time in seconds, "-" if none.
func formatTakeover(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", d.Seconds())
}

// takeoverTimes are a takeover's seconds from the crash and its own.
type takeoverTimes struct{ fromKill, took time.Duration }

// recoveryRun runs one case and returns, if the coordinator was crashed,
// the times of the successor's takeover.
func recoveryRun(ctx context.Context, cc job.ClusterConfig, c job.DemoConfig, replication int, v victim) (job.Report, takeoverTimes, int64, error) {
	dir, err := os.MkdirTemp("", "shufflenode-bench-")
	if err != nil {
		return job.Report{}, takeoverTimes{}, 0, err
	}
	defer os.RemoveAll(dir)
	nodes, err := node.StartLocal(ctx, cc.Nodes, cc.NodeConfig(dir, cc.Logger))
	if err != nil {
		return job.Report{}, takeoverTimes{}, 0, err
	}
	defer node.CloseAll(nodes)
	c.ID, c.Replication, c.Rule, c.Progress = fmt.Sprintf("bench-%d", time.Now().UnixNano()), replication, "", nil
	var k killer
	if v != noVictim && len(nodes) > 1 {
		c.BeforeInput = func(t int) {
			if t == c.Tasks/2 {
				k.kill(nodes, c.ID, v)
			}
		}
	}
	rep, err := job.RunDemo(ctx, job.APIAddrs(nodes), c)
	return rep, k.takeover(nodes), movedBytes(rep, v, k.waitHanded()), err
}

// killer crashes one node of a cluster, once, and remembers when.
type killer struct {
	mu     sync.Mutex
	at     time.Time
	who    int
	handed chan int64 // a drain's bytes handed over, once it is done
}

// waitHanded waits for the drain, if any, and returns what it handed over.
func (k *killer) waitHanded() int64 {
	k.mu.Lock()
	c := k.handed
	k.mu.Unlock()
	if c == nil {
		return 0
	}
	return <-c
}

// kill crashes (in the background) the node of nodes that v names for
// shuffle id, unless a node was crashed already.
func (k *killer) kill(nodes []*node.Node, id string, v victim) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.at.IsZero() {
		return
	}
	k.who, k.at = pickVictim(nodes, id, v), time.Now()
	if v == drained {
		k.handed = make(chan int64, 1)
		go func() { k.handed <- drainAndLeave(nodes[k.who]) }()
		return
	}
	go nodes[k.who].Close()
}

// pickVictim is the index of the coordinator of shuffle id (v ==
// coordinator) or of the first node that does not coordinate it.
func pickVictim(nodes []*node.Node, id string, v victim) int {
	coord := ""
	for _, n := range nodes {
		if in, err := n.Service.Info(id); err == nil {
			coord = in.Coordinator
			break
		}
	}
	for i, n := range nodes {
		if (n.Name() == coord) == (v == coordinator) {
			return i
		}
	}
	return 0
}

// takeover is the time from the crash to the end of the last takeover a
// surviving node did after it, and that takeover's own; zero if none.
func (k *killer) takeover(nodes []*node.Node) takeoverTimes {
	k.mu.Lock()
	defer k.mu.Unlock()
	var last service.Stats
	for i, n := range nodes {
		if st := n.Service.Stats(); i != k.who && st.LastTakeover.After(last.LastTakeover) {
			last = st
		}
	}
	if k.at.IsZero() || !last.LastTakeover.After(k.at) {
		return takeoverTimes{}
	}
	return takeoverTimes{last.LastTakeover.Sub(k.at), last.LastTakeoverTook}
}
