package receiver

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// TestNothingStoredAfterClose: receives that race the drop of their shuffle
// (Finish, Close, then the store's DropShuffle, in the service's order)
// leave nothing behind in the store: no piece and no reserved byte. Without
// Close, a receive that was already past its checks stores or reserves
// after the drop, and the store keeps that for a shuffle no one drops again.
func TestNothingStoredAfterClose(t *testing.T) {
	const tasks, rowsPerTask, parts = 256, 32, 16
	gen := table.GenConfig{Rows: tasks * rowsPerTask, PayloadBytes: 8, Seed: 5}
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]*shard.Msg, tasks)
	for task := range msgs {
		msgs[task] = taskMsg(t, codec, gen, task, tasks, parts)
	}
	for round := range 40 {
		// Rounds alternate between a budget the accumulators fit in
		// (Reserve) and one they do not (pieces stored by PutMany, and
		// spilled to badger).
		cfg := spill.Config{MemoryLimit: 64 << 20}
		if round%2 == 1 {
			cfg = spill.Config{MemoryLimit: 64 << 10, Dir: t.TempDir()}
		}
		store, err := spill.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sh := frameShuffle(t, codec, tasks, parts)
		rc := New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
			Committed: func(*shuffle.State, Commit) {}})
		raceDrop(t, rc, sh, store, msgs, round)
		if st := store.Stats(); st.MemoryBytes != 0 || st.MemoryPieces != 0 {
			t.Fatalf("round %d: after the drop the store holds %d bytes in %d pieces", round, st.MemoryBytes, st.MemoryPieces)
		}
		if ps := store.Partitions(sh.ID()); len(ps) != 0 {
			t.Fatalf("round %d: after the drop the store lists partitions %v of the dropped shuffle", round, ps)
		}
		store.Close()
	}
}

// raceDrop receives msgs on two goroutines and drops the shuffle after a
// number of receives that varies by round. Receives either succeed or are
// refused because the shuffle failed.
func raceDrop(t *testing.T, rc *Receiver, sh *Shuffle, store *spill.Store, msgs []*shard.Msg, round int) {
	t.Helper()
	var done atomic.Int64
	dropAt := int64(8 + 13*round%len(msgs)/2)
	var wg sync.WaitGroup
	errs := make(chan error, len(msgs))
	for g := range 2 {
		wg.Go(func() {
			for i := g; i < len(msgs); i += 2 {
				if err := rc.Receive(context.Background(), sh, msgs[i]); err != nil && !errors.Is(err, shuffle.ErrFailed) {
					errs <- err
				}
				done.Add(1)
			}
		})
	}
	for done.Load() < dropAt {
		// spin: the drop lands while both goroutines receive
	}
	sh.Finish(shuffle.Failed, errors.New("dropped by the test"))
	sh.Close()
	if err := store.DropShuffle(sh.ID()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("round %d: a receive failed other than by the drop: %v", round, err)
	}
}

// frameShuffle is the receive side, on node "a" alone, of a dataframe
// shuffle of the generator's schema.
func frameShuffle(t testing.TB, codec *table.Codec, tasks, parts int) *Shuffle {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Dataframe, Tasks: tasks, Partitions: parts, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{table.GenSchema().Field(0).Name}}}
	st, err := shuffle.New(sp, "a", []string{"a"}, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	return NewShuffle(st, nil)
}

// taskMsg is task's rows in one entry, cut into runs of equal size over
// the partitions, with the task's end marker.
func taskMsg(t testing.TB, codec *table.Codec, gen table.GenConfig, task, tasks, parts int) *shard.Msg {
	t.Helper()
	rec := table.GenTask(memory.DefaultAllocator, gen, task, tasks)
	defer rec.Release()
	data, err := codec.AppendRecord(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([]shard.Run, parts)
	for p := range runs {
		runs[p] = shard.Run{Partition: uint32(p), Count: uint64(rec.NumRows()) / uint64(parts)}
	}
	runs[parts-1].Count += uint64(rec.NumRows()) % uint64(parts)
	e := shard.Entry{Task: uint64(task), Runs: runs, Data: data}
	return &shard.Msg{Shuffle: "s", Entries: []shard.Entry{e}, Ends: []shard.End{{Task: uint64(task), Pieces: 1}}}
}
