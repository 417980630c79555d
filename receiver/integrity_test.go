package receiver

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// frameFixture is a receiver on node "a" of a dataframe shuffle of one
// task and 6 partitions over nodes a and b.
func frameFixture(t *testing.T) *fixture {
	t.Helper()
	f, _ := dataframeFixture(t, spill.Config{MemoryLimit: 1 << 20}, 1, "")
	return f
}

// dataframeFixture is a receiver on node "a", on a store opened with cfg,
// of a dataframe shuffle of tasks tasks and 6 partitions over nodes a and
// b, with on_differ onDiffer.
func dataframeFixture(t *testing.T, cfg spill.Config, tasks int, onDiffer string) (*fixture, *spill.Store) {
	t.Helper()
	store, err := spill.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	codec, _ := table.NewCodec(table.GenSchema(), nil)
	sp := &spec.Spec{ID: "s", Kind: spec.Dataframe, Tasks: tasks, Partitions: 6, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}, OnDiffer: onDiffer}
	st, err := shuffle.New(sp, "a", []string{"a", "b"}, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sh: NewShuffle(st, nil)}
	f.rc = New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
		Committed: func(_ *shuffle.State, c Commit) { f.commits = append(f.commits, c) }})
	return f, store
}

// sumsOf is an end marker's row sums for the partitions a holds now: rows
// p+1 and sum seed+p each, but partition skip gets none.
func sumsOf(f *fixture, seed uint64, skip int) []shard.PartSum {
	var out []shard.PartSum
	f.sh.Route().Held.ForEach(func(p int) bool {
		if p != skip {
			out = append(out, shard.PartSum{Partition: uint32(p), Rows: uint64(p + 1), Sum: seed + uint64(p)})
		}
		return true
	})
	return out
}

// TestReplayChecksRowSums: the replay of a task that committed on a before
// b was lost is compared, for the partitions a kept, with the first
// attempt's row sums; equal sums pass, a changed sum or a missing partition
// is reported with the partition and the attempts' rows.
func TestReplayChecksRowSums(t *testing.T) {
	for _, tc := range []struct {
		name      string
		seed      uint64
		skip      int
		differs   bool
		firstRows uint64
	}{
		{name: "same rows", seed: 100, skip: -1},
		{name: "a sum differs", seed: 101, skip: -1, differs: true},
		{name: "a partition lost its rows", seed: 100, skip: 1 << 20, differs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := frameFixture(t)
			ctx := context.Background()
			first := sumsOf(f, 100, -1)
			kept := int(first[0].Partition)
			end := func(epoch uint64, attempt uint32, sums []shard.PartSum) {
				m := &shard.Msg{Shuffle: "s", Epoch: epoch, Ends: []shard.End{{Task: 0, Attempt: attempt, Sums: sums}}}
				if err := f.rc.Receive(ctx, f.sh, m); err != nil {
					t.Fatal(err)
				}
			}
			end(0, 0, first)
			moveEpoch(t, f.sh.State, "b")
			skip := tc.skip
			if skip == 1<<20 {
				skip = kept
			}
			end(1, 1, sumsOf(f, tc.seed, skip))
			if len(f.commits) != 2 {
				t.Fatalf("%d commits, want 2", len(f.commits))
			}
			d := f.commits[1].Differs
			if f.commits[0].Differs != nil || (d != nil) != tc.differs {
				t.Fatalf("differs %+v, want a difference: %t", d, tc.differs)
			}
			if d != nil && (d.Partition != uint32(kept) || d.First != 0 || d.FirstRows != uint64(kept+1)) {
				t.Errorf("differs %+v, want partition %d of attempt 0 with %d rows", d, kept, kept+1)
			}
		})
	}
}
