package receiver

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// tinyRunsMsg is attempt's rows of task in one entry, row i in partition
// (task+i) % parts, a run each: an entry of a shuffle with more partitions
// than the task has rows, which the receiver stages.
func tinyRunsMsg(t *testing.T, codec *table.Codec, gen table.GenConfig, task, tasks, parts int, attempt uint32) *shard.Msg {
	t.Helper()
	rec := table.GenTask(memory.DefaultAllocator, gen, task, tasks)
	defer rec.Release()
	data, err := codec.AppendRecord(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([]shard.Run, rec.NumRows())
	for i := range runs {
		runs[i] = shard.Run{Partition: uint32((task + i) % parts), Count: 1}
	}
	e := shard.Entry{Task: uint64(task), Attempt: attempt, Runs: runs, Data: data}
	return &shard.Msg{Shuffle: "s", Entries: []shard.Entry{e}, Ends: []shard.End{{Task: uint64(task), Attempt: attempt, Pieces: 1}}}
}

// TestStagedEntriesAreReadOnce: entries of tiny runs, more than a stage
// holds, received on two goroutines with resends among them and a second
// attempt of some tasks after the first committed, read back after the
// seal: every partition has each task's row once.
func TestStagedEntriesAreReadOnce(t *testing.T) {
	const tasks, rowsPerTask, parts = stageMaxEntries + 900, 3, 64
	gen := table.GenConfig{Rows: tasks * rowsPerTask, PayloadBytes: 8, Seed: 3}
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := spill.Open(spill.Config{MemoryLimit: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var mu sync.Mutex
	commits := 0
	rc := New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
		Committed: func(*shuffle.State, Commit) { mu.Lock(); commits++; mu.Unlock() }})
	sh := frameShuffle(t, codec, tasks, parts)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for g := range 2 {
		wg.Go(func() {
			for task := g; task < tasks; task += 2 {
				m := tinyRunsMsg(t, codec, gen, task, tasks, parts, 0)
				for copies := 1 + btoi(task%10 == 0); copies > 0; copies-- { // a resend of every tenth
					if err := rc.Receive(context.Background(), sh, m); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for task := range 100 { // attempts 1 of tasks whose attempt 0 committed: never served
		if err := rc.Receive(context.Background(), sh, tinyRunsMsg(t, codec, gen, task, tasks, parts, 1)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	if n := commits; n != tasks+100 {
		t.Errorf("%d commits, want %d (each attempt once)", n, tasks+100)
	}
	mu.Unlock()
	sh.Finish(shuffle.Sealed, nil)
	var total int64
	for p := range parts {
		got, want := readRows(t, rc, sh, p), int64(0)
		for task := range tasks {
			for i := range rowsPerTask {
				if (task+i)%parts == p {
					want++
				}
			}
		}
		if got != want {
			t.Errorf("partition %d: %d rows, want %d", p, got, want)
		}
		total += got
	}
	if total != tasks*rowsPerTask {
		t.Errorf("%d rows read, want %d", total, tasks*rowsPerTask)
	}
	if n := sh.stage.held.Load(); n != 0 {
		t.Errorf("%d entries left staged after the reads", n)
	}
}
