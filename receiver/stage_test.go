package receiver

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// stagingReceiver is the generated rows' codec and a receiver on a store
// whose budget takes every entry of the staging tests into memory, with
// output batches of batchRows rows and commits reported to committed.
func stagingReceiver(t *testing.T, batchRows int64, committed func(*shuffle.State, Commit)) (*table.Codec, *Receiver) {
	t.Helper()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := spill.Open(spill.Config{MemoryLimit: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return codec, New(Config{Store: store, OutputBatchRows: batchRows, Allocator: memory.DefaultAllocator, Committed: committed})
}

// TestStagedEntriesAreReadOnce: entries of tiny runs, more than a stage
// holds, received on two goroutines with resends among them and a second
// attempt of some tasks after the first committed, read back after the
// seal: every partition has each task's row once.
func TestStagedEntriesAreReadOnce(t *testing.T) {
	const tasks, rowsPerTask, parts = stageMaxEntries + 900, 3, 64
	gen := table.GenConfig{Rows: tasks * rowsPerTask, PayloadBytes: 8, Seed: 3}
	var mu sync.Mutex
	commits := 0
	codec, rc := stagingReceiver(t, 1024, func(*shuffle.State, Commit) { mu.Lock(); commits++; mu.Unlock() })
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

// TestBlocksServeTheRowsAppended: partitions that get staged entries of
// tiny runs (appended in blocks) and, between them, entries of long runs
// of other tasks (appended to the partitions' own chunks), with resends
// and second attempts that must not be served, read back after the seal
// and exported for a handover: each partition's rows are exactly those
// its tasks' first attempts sent it, row for row, in task order. It fails
// if a block segment points at the wrong rows or block, or a read skips
// the ledger for block segments.
func TestBlocksServeTheRowsAppended(t *testing.T) {
	const tasks, rowsPerTask, parts = 2*stageMaxEntries + 300, 3, 97
	gen := table.GenConfig{Rows: tasks * rowsPerTask, PayloadBytes: 8, Seed: 5}
	codec, rc := stagingReceiver(t, 1<<20, func(*shuffle.State, Commit) {})
	sh := frameShuffle(t, codec, tasks, parts)
	long := func(task int) bool { return task%50 == 7 } // one run per partition: not staged
	for task := range tasks {
		m := tinyRunsMsg(t, codec, gen, task, tasks, parts, 0)
		if long(task) {
			m = longRunsMsg(t, codec, gen, task, tasks, parts)
		}
		for copies := 1 + btoi(task%13 == 0); copies > 0; copies-- {
			if err := rc.Receive(context.Background(), sh, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	for task := 0; task < tasks; task += 17 { // second attempts: never served
		if err := rc.Receive(context.Background(), sh, tinyRunsMsg(t, codec, gen, task, tasks, parts, 1)); err != nil {
			t.Fatal(err)
		}
	}
	sh.Finish(shuffle.Sealed, nil)
	sh.accs.mu.Lock()
	blocks := len(sh.accs.blocks)
	sh.accs.mu.Unlock()
	if blocks < 2 {
		t.Fatalf("%d blocks, want several (the stage's entries go to blocks)", blocks)
	}
	for p := range parts {
		want := expectedRows(t, gen, tasks, parts, p, long)
		got := readRecord(t, rc, sh, p)
		if !array.RecordEqual(got, want) {
			t.Errorf("partition %d: read %d rows, not the %d sent, in task order", p, got.NumRows(), want.NumRows())
		}
		exported := exportRecord(t, rc, sh, codec, p)
		if !array.RecordEqual(exported, want) {
			t.Errorf("partition %d: exported %d rows, not the %d sent, in task order", p, exported.NumRows(), want.NumRows())
		}
		gathered := gatherRecord(t, rc, sh, p)
		if !array.RecordEqual(gathered, want) {
			t.Errorf("partition %d: gathered %d rows, not the %d sent, in task order", p, gathered.NumRows(), want.NumRows())
		}
		got.Release()
		exported.Release()
		gathered.Release()
		want.Release()
	}
}

// gatherRecord gathers partition p as a packed read does, into one record.
func gatherRecord(t *testing.T, rc *Receiver, sh *Shuffle, p int) arrow.Record {
	t.Helper()
	var g Gather
	defer g.Reset()
	if ok, err := rc.GatherPartition(context.Background(), sh, p, &g, 1<<30, 1<<40); !ok || err != nil {
		t.Fatalf("gather partition %d: %v, %v", p, ok, err)
	}
	out, err := table.ConcatRanges(memory.DefaultAllocator, sh.Schema, g.Ranges())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// longRunsMsg is task's rows gathered by partition ((task+i) % parts, as
// tinyRunsMsg places them) in one entry of a run per partition that got
// rows.
func longRunsMsg(t *testing.T, codec *table.Codec, gen table.GenConfig, task, tasks, parts int) *shard.Msg {
	t.Helper()
	rec := table.GenTask(memory.DefaultAllocator, gen, task, tasks)
	defer rec.Release()
	var ranges []table.RowRange
	var runs []shard.Run
	for p := range parts {
		for i := range int(rec.NumRows()) {
			if (task+i)%parts == p {
				ranges = append(ranges, table.RowRange{Rec: rec, Off: int64(i), Rows: 1})
				if len(runs) == 0 || runs[len(runs)-1].Partition != uint32(p) {
					runs = append(runs, shard.Run{Partition: uint32(p)})
				}
				runs[len(runs)-1].Count++
			}
		}
	}
	gathered, err := table.ConcatRanges(nil, rec.Schema(), ranges)
	if err != nil {
		t.Fatal(err)
	}
	defer gathered.Release()
	data, err := codec.AppendRecord(nil, gathered)
	if err != nil {
		t.Fatal(err)
	}
	e := shard.Entry{Task: uint64(task), Runs: runs, Data: data}
	return &shard.Msg{Shuffle: "s", Entries: []shard.Entry{e}, Ends: []shard.End{{Task: uint64(task), Pieces: 1}}}
}

// expectedRows is partition p's rows as its tasks sent them, in task
// order.
func expectedRows(t *testing.T, gen table.GenConfig, tasks, parts, p int, long func(int) bool) arrow.Record {
	t.Helper()
	var recs []arrow.Record
	var ranges []table.RowRange
	for task := range tasks {
		rec := table.GenTask(memory.DefaultAllocator, gen, task, tasks)
		recs = append(recs, rec)
		for i := range int(rec.NumRows()) {
			if (task+i)%parts == p {
				ranges = append(ranges, table.RowRange{Rec: rec, Off: int64(i), Rows: 1})
			}
		}
	}
	defer releaseAll(recs)
	out, err := table.ConcatRanges(nil, recs[0].Schema(), ranges)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readRecord reads partition p into one record.
func readRecord(t *testing.T, rc *Receiver, sh *Shuffle, p int) arrow.Record {
	t.Helper()
	var recs []arrow.Record
	if err := rc.Get(context.Background(), sh, p, func(r arrow.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return joined(t, recs)
}

// exportRecord exports partition p and joins the pieces into one record.
func exportRecord(t *testing.T, rc *Receiver, sh *Shuffle, codec *table.Codec, p int) arrow.Record {
	t.Helper()
	var recs []arrow.Record
	err := rc.Export(context.Background(), sh, uint32(p), func(e shard.Entry, _ shard.PartSum) error {
		rec, err := codec.Decode(e.Data)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return joined(t, recs)
}

// joined is recs in one record; it releases recs.
func joined(t *testing.T, recs []arrow.Record) arrow.Record {
	t.Helper()
	defer releaseAll(recs)
	out, err := table.Concat(nil, recs)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBlockRunsInTaskOrder: a stage's entries received in no order of
// task make one block whose runs of each partition are in task order, so
// a gather of a partition copies the block's rows as one range (in arrival
// order it took a range per run, a row each), and they are the rows sent,
// in task order.
func TestBlockRunsInTaskOrder(t *testing.T) {
	const tasks, rowsPerTask, parts = 600, 4, 53
	gen := table.GenConfig{Rows: tasks * rowsPerTask, PayloadBytes: 8, Seed: 11}
	codec, rc := stagingReceiver(t, 1<<20, func(*shuffle.State, Commit) {})
	sh := frameShuffle(t, codec, tasks, parts)
	for _, task := range rand.New(rand.NewPCG(3, 4)).Perm(tasks) {
		if err := rc.Receive(context.Background(), sh, tinyRunsMsg(t, codec, gen, task, tasks, parts, 0)); err != nil {
			t.Fatal(err)
		}
	}
	sh.Finish(shuffle.Sealed, nil)
	for p := range parts {
		var g Gather
		if ok, err := rc.GatherPartition(context.Background(), sh, p, &g, 1<<30, 1<<40); !ok || err != nil {
			t.Fatalf("gather partition %d: %v, %v", p, ok, err)
		}
		if n := len(g.Ranges()); n != 1 {
			t.Errorf("partition %d: gathered in %d ranges, want 1 (one block, its runs in task order)", p, n)
		}
		got, err := table.ConcatRanges(memory.DefaultAllocator, sh.Schema, g.Ranges())
		if err != nil {
			t.Fatal(err)
		}
		want := expectedRows(t, gen, tasks, parts, p, func(int) bool { return false })
		if !array.RecordEqual(got, want) {
			t.Errorf("partition %d: %d rows, not the %d sent, in task order", p, got.NumRows(), want.NumRows())
		}
		got.Release()
		want.Release()
		g.Reset()
	}
}
