package integration

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// TestProcessReplayDiffers SIGKILLs a serve process that is not the
// coordinator while a dataframe shuffle's tasks are put (4 processes), so
// the tasks that sent it rows run again. Where a replay produces the rows
// its first attempt did, the shuffle seals and every row is read once;
// where it produces other rows, the client gets DataLoss naming the
// shuffle, a task and a partition, and no output is served from the mix.
func TestProcessReplayDiffers(t *testing.T) {
	t.Parallel()
	for _, changes := range []bool{false, true} {
		t.Run(fmt.Sprintf("replay changes %t", changes), func(t *testing.T) {
			t.Parallel()
			c := startProcs(t, 4)
			id := fmt.Sprintf("differs-%t", changes)
			gen := table.GenConfig{Rows: procRows, Seed: 3, KeyCardinality: 1 << 12, PayloadBytes: 8}
			in := &replayInput{gen: gen, changes: changes, made: map[int]int{}}
			in.before = onceAt(procTasks/2, func() { nonCoordinator(t, c, id).kill() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := client.Run(ctx, client.Job{Spec: genSpec(id), Nodes: c.apis(), Input: in.produce, Parallel: procParallel})
			if changes {
				checkDataLoss(t, id, err)
				return
			}
			if err != nil {
				t.Fatalf("deterministic replay: %v", err)
			}
			defer res.Close(context.WithoutCancel(ctx))
			if res.Replayed() == 0 {
				t.Errorf("no task ran again after a node was killed")
			}
			checkRowsOnce(t, ctx, res, gen)
		})
	}
}

// replayInput produces the demo's input tasks; with changes, a task's
// second and later productions hold as many rows from another seed.
type replayInput struct {
	gen     table.GenConfig
	changes bool
	before  func(task int)
	mu      sync.Mutex
	made    map[int]int
}

func (in *replayInput) produce(task int) ([]arrow.Record, error) {
	in.before(task)
	in.mu.Lock()
	in.made[task]++
	n := in.made[task]
	in.mu.Unlock()
	g := in.gen
	if in.changes && n > 1 {
		g.Seed += 1000
	}
	return []arrow.Record{table.GenTask(memory.DefaultAllocator, g, task, procTasks)}, nil
}

// genSpec is a dataframe shuffle of table.GenSchema rows hashed on "key".
func genSpec(id string) *spec.Spec {
	codec, _ := table.NewCodec(table.GenSchema(), nil)
	return &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: procTasks, Partitions: procPartitions,
		Schema: codec.SchemaBytes(), Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}}
}

// nonCoordinator returns a live process that does not coordinate id.
func nonCoordinator(t *testing.T, c *procCluster, id string) *proc {
	co := coordinatorProc(t, c, id)
	for _, p := range c.procs {
		if p != co && p.alive() {
			return p
		}
	}
	t.Fatal("no process but the coordinator")
	return nil
}

// checkDataLoss checks that err is the replay-differs failure of id over
// Flight: DataLoss, naming the shuffle, a task and a partition.
func checkDataLoss(t *testing.T, id string, err error) {
	t.Helper()
	if status.Code(err) != codes.DataLoss {
		t.Fatalf("a replay with other rows: %v (code %s), want DataLoss", err, status.Code(err))
	}
	if !regexp.MustCompile(`shuffle ` + id + ` task \d+ partition \d+`).MatchString(err.Error()) {
		t.Errorf("the error does not name the shuffle, task and partition: %v", err)
	}
}

// checkRowsOnce reads every partition and checks that each row id of the
// input arrives exactly once.
func checkRowsOnce(t *testing.T, ctx context.Context, res *client.Result, gen table.GenConfig) {
	t.Helper()
	seen := map[int64]int{}
	for p := range procPartitions {
		err := res.Read(ctx, p, func(rec arrow.Record) error {
			ids := rec.Column(1).(*array.Int64) // the reader's: not released here
			for i := range ids.Len() {
				seen[ids.Value(i)]++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("read partition %d: %v", p, err)
		}
	}
	var want int64
	for task := range procTasks {
		rows, _ := table.GenTaskRows(gen, task, procTasks)
		want += rows
	}
	if int64(len(seen)) != want {
		t.Errorf("%d distinct rows read, want %d", len(seen), want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d read %d times", id, n)
		}
	}
}
