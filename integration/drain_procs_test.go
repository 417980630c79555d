package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
)

// TestProcessDrain drains a serve process that neither coordinates the
// shuffle nor is the client's home (4 processes, a dataframe shuffle with
// one copy of each shard or two): with SIGTERM while the tasks are put, or
// with the Flight action drain after the barrier. The drained process
// refuses new puts (the client runs them on other nodes), lets its running
// puts finish, and makes sure its data needs no replay: a replicated
// shuffle's backups hold copies; with one copy it hands its committed
// partitions to their new owners. It leaves and exits 0; the coordinator
// replays no task, every row is read exactly once, and the drained node's
// partitions are read from the nodes that took them over.
func TestProcessDrain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		when        string
		replication int
	}{
		{"sigterm during puts", 2}, {"action after the barrier", 2},
		{"sigterm during puts", 1}, {"action after the barrier", 1},
	} {
		name := fmt.Sprintf("%s with replication %d", tc.when, tc.replication) // no comma: the data directory is named after it
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 4)
			id := fmt.Sprintf("drain-%s-%d", strings.Fields(tc.when)[0], tc.replication)
			gen := table.GenConfig{Rows: procRows, Seed: 5, KeyCardinality: 1 << 12, PayloadBytes: 8}
			in := &replayInput{gen: gen, made: map[int]int{}, before: func(int) {}}
			var drained *proc
			if tc.when == "sigterm during puts" {
				in.before = onceAt(procTasks/2, func() {
					drained = bystander(t, c, id)
					_ = drained.cmd.Process.Signal(syscall.SIGTERM)
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sp := genSpec(id)
			sp.Replication = tc.replication
			res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: c.apis(), Input: in.produce, Parallel: procParallel})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			defer res.Close(context.WithoutCancel(ctx))
			if drained == nil {
				drained = bystander(t, c, id)
				drainAction(ctx, t, drained)
			}
			awaitDrained(t, drained)
			checkRowsOnce(t, ctx, res, gen)
			if res.ReplaySet != 0 {
				t.Errorf("the coordinator replayed %d tasks after a drain, want 0", res.ReplaySet)
			}
			if n := res.Replayed(); n != 0 && tc.replication == 2 {
				t.Errorf("%d tasks ran again after a drain, want 0", n)
			}
			t.Logf("puts run again (in flight when the epoch moved, or refused by the draining node): %d", res.Replayed())
			for _, ep := range res.Endpoints {
				if ep.Addr == drained.api {
					t.Errorf("partition %d is still read from the drained node %s", ep.Partition, drained.name)
				}
			}
			if tc.replication == 1 {
				b, _ := os.ReadFile(drained.log)
				if !strings.Contains(string(b), `msg="handed over"`) {
					t.Errorf("%s's log does not say it handed its partitions over:\n%s", drained.name, tail(drained.log, 20))
				}
			}
		})
	}
}

// bystander returns a live process that neither coordinates id nor is
// the client's home for it.
func bystander(t *testing.T, c *procCluster, id string) *proc {
	co := coordinatorProc(t, c, id)
	home := c.procs[clientHome(id, len(c.procs))]
	for _, p := range c.procs {
		if p != co && p != home && p.alive() {
			return p
		}
	}
	t.Fatal("no process but the coordinator and the client's home")
	return nil
}

// drainAction asks p to drain with the Flight action drain.
func drainAction(ctx context.Context, t *testing.T, p *proc) {
	fc, err := flightproto.Dial(p.api)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	stream, err := fc.DoAction(ctx, &flight.Action{Type: flightproto.ActionDrain})
	if err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		t.Fatalf("drain action: %v", err)
	}
	if !strings.Contains(string(r.Body), `"draining":true`) {
		t.Errorf("drain action replied %s", r.Body)
	}
}

// awaitDrained waits until p exited after a drain that handed over
// everything, and until the others saw it leave.
func awaitDrained(t *testing.T, p *proc) {
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatalf("%s still runs a minute after its drain", p.name)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("%s exited %d after its drain:\n%s", p.name, code, tail(p.log, 20))
	}
	b, _ := os.ReadFile(p.log)
	if !strings.Contains(string(b), "drain done") || !strings.Contains(string(b), "handed_over=true") {
		t.Errorf("%s's log does not say its drain handed over everything:\n%s", p.name, tail(p.log, 20))
	}
}

// TestProcessDrainKilledMidHandover: a serve process drains a one-copy
// shuffle after the barrier and is killed (SIGKILL) as soon as the
// coordinator moved the epoch for its handover, before it said the copy
// finished. The coordinator falls back to the loss path once: it replays
// the tasks whose data the node held, the new owners keep what they took
// of the copy and drop the replays' rows for it by ID, and every row is
// read exactly once.
func TestProcessDrainKilledMidHandover(t *testing.T) {
	t.Parallel()
	c := startProcs(t, 4)
	id := "drain-cut"
	gen := table.GenConfig{Rows: procRows, Seed: 6, KeyCardinality: 1 << 12, PayloadBytes: 64}
	in := &replayInput{gen: gen, made: map[int]int{}, before: func(int) {}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := client.Run(ctx, client.Job{Spec: genSpec(id), Nodes: c.apis(), Input: in.produce, Parallel: procParallel})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	defer res.Close(context.WithoutCancel(ctx))
	co := coordinatorProc(t, c, id)
	victim := bystander(t, c, id)
	_ = victim.cmd.Process.Signal(syscall.SIGTERM)
	awaitLogLine(t, co, `msg="handover: new epoch without a draining node"`)
	_ = victim.cmd.Process.Kill()
	checkRowsOnce(t, ctx, res, gen)
	b, _ := os.ReadFile(co.log)
	if !strings.Contains(string(b), `msg="handover failed: replaying what the node held"`) {
		t.Errorf("%s's log does not say it fell back to the loss path:\n%s", co.name, tail(co.log, 30))
	}
	if strings.Count(string(b), `msg="handover failed`) > 1 {
		t.Errorf("%s fell back more than once:\n%s", co.name, tail(co.log, 30))
	}
	if res.ReplaySet == 0 {
		t.Error("nothing was replayed after the handover was cut")
	}
}

// awaitLogLine waits until p's log holds line, polling every millisecond
// (the handover it waits for takes tens of milliseconds).
func awaitLogLine(t *testing.T, p *proc, line string) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(p.log); strings.Contains(string(b), line) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s never logged %s:\n%s", p.name, line, tail(p.log, 30))
}
