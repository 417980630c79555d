package bench

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/shufflenode/shufflenode/job"
)

// BenchDrainProcs runs the demo c twice on a fresh cluster of
// pc.Processes serve processes (pc.Processes >= 2): once a node that does
// not coordinate the shuffle is drained (SIGTERM) halfway through the
// puts, once it is killed (SIGKILL) there. For each it prints the seconds
// of the whole run (puts, barrier, reads), the bytes moved to recover (the
// drained node's handover to its partitions' new owners; for a kill, the
// input bytes of the task runs the client did again, estimated from the
// mean task size), the tasks the coordinator replayed (its replay set) and
// the puts the client ran again (replays and puts refused or cut by the
// departure). Part of bench recovery (--processes).
func BenchDrainProcs(ctx context.Context, w io.Writer, pc ProcsConfig, c job.DemoConfig) error {
	if pc.Processes < 2 {
		return fmt.Errorf("%w: drain against kill needs 2 processes or more, not %d", ErrProcs, pc.Processes)
	}
	fmt.Fprintf(w, "%-42s %8s %7s %7s %10s\n", fmt.Sprintf("%d serve processes, one node leaves", pc.Processes), "seconds", "puts", "replay", "moved")
	for _, drain := range []bool{true, false} {
		name := map[bool]string{true: "drained (SIGTERM) halfway", false: "killed (SIGKILL) halfway"}[drain]
		rep, moved, err := departureRun(ctx, pc, c, drain)
		if err != nil {
			return fmt.Errorf("bench recovery %s: %w", name, err)
		}
		fmt.Fprintf(w, "%-42s %8.2f %7d %7d %10s\n", name, rep.TotalSeconds, rep.Attempts, rep.ReplaySet, job.FormatBytes(moved))
	}
	return nil
}

// departureRun runs one case of BenchDrainProcs and returns the demo's
// report and the bytes moved to recover.
func departureRun(ctx context.Context, pc ProcsConfig, c job.DemoConfig, drain bool) (job.Report, int64, error) {
	pc.LogLevel = "info" // the drained node logs what it handed over
	p, err := StartProcs(ctx, pc)
	if err != nil {
		return job.Report{}, 0, err
	}
	defer p.Close()
	addrs := p.Addrs()
	c.ID, c.Progress = fmt.Sprintf("bench-leave-%d", time.Now().UnixNano()), nil
	victim := p.procs[(clientHome(c.ID, len(addrs))+1)%len(addrs)] // not the coordinator (the client's home)
	sig := map[bool]syscall.Signal{true: syscall.SIGTERM, false: syscall.SIGKILL}[drain]
	c.BeforeInput = onceAtTask(c.Tasks/2, func() { _ = victim.cmd.Process.Signal(sig) })
	rep, err := job.RunDemo(ctx, addrs, c)
	if err != nil {
		return rep, 0, err
	}
	if !drain {
		return rep, movedBytes(rep, dataNode, 0), nil
	}
	select {
	case <-victim.exited:
	case <-time.After(30 * time.Second):
		return rep, 0, fmt.Errorf("%w: %s still runs 30 s after its drain", ErrProcs, victim.name)
	}
	return rep, handedBytes(victim.log), nil
}

// handedRe finds what a drained node logged it handed over.
var handedRe = regexp.MustCompile(`msg="handed over" .*bytes=([0-9]+)`)

// handedBytes sums the bytes a drained node's log says it handed over.
func handedBytes(log string) int64 {
	b, err := os.ReadFile(log)
	if err != nil {
		return 0
	}
	var n int64
	for _, m := range handedRe.FindAllSubmatch(b, -1) {
		v, _ := strconv.ParseInt(string(m[1]), 10, 64)
		n += v
	}
	return n
}

// clientHome is the index, among n API addresses, of the node the client
// creates shuffle id on, which coordinates it (package client's rule).
func clientHome(id string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// onceAtTask returns a BeforeInput func that calls fn once, before task
// at is first produced (a second SIGTERM would stop a draining process at
// once).
func onceAtTask(at int, fn func()) func(int) {
	var once sync.Once
	return func(t int) {
		if t == at {
			once.Do(fn)
		}
	}
}

// Addrs lists the processes' API addresses in start order.
func (p *Procs) Addrs() []string {
	out := make([]string, len(p.procs))
	for i, sp := range p.procs {
		out[i] = sp.api
	}
	return out
}
