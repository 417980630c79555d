package integration

import (
	"context"
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
// shuffle nor is the client's home (4 processes, a replicated dataframe
// shuffle): with SIGTERM while the tasks are put, or with the Flight
// action drain after the barrier. The drained process refuses new puts
// (the client runs them on other nodes), lets its running puts finish,
// says in its log that its data needs no replay, leaves and exits 0; no
// task runs again and every row is read exactly once, the drained node's
// partitions from the nodes that took them over.
func TestProcessDrain(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"sigterm during puts", "action after the barrier"} {
		t.Run(when, func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 4)
			id := "drain-" + strings.Fields(when)[0]
			gen := table.GenConfig{Rows: procRows, Seed: 5, KeyCardinality: 1 << 12, PayloadBytes: 8}
			in := &replayInput{gen: gen, made: map[int]int{}, before: func(int) {}}
			var drained *proc
			if when == "sigterm during puts" {
				in.before = onceAt(procTasks/2, func() {
					drained = bystander(t, c, id)
					_ = drained.cmd.Process.Signal(syscall.SIGTERM)
				})
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sp := genSpec(id)
			sp.Replication = 2
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
			if n := res.Replayed(); n != 0 {
				t.Errorf("%d tasks ran again after a drain, want 0", n)
			}
			checkRowsOnce(t, ctx, res, gen)
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
