package receiver

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// TestHandOverExportAdopt: a node's committed partitions (accumulated,
// stored in memory, or spilled to badger) exported and adopted by another
// node are read there row for row; adopting them again adds nothing, and a
// (task, partition) the adopter committed itself is kept once.
func TestHandOverExportAdopt(t *testing.T) {
	const tasks, parts = 24, 4
	gen := table.GenConfig{Rows: tasks * 50, PayloadBytes: 16, Seed: 3}
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  spill.Config
	}{
		{"accumulated", spill.Config{MemoryLimit: 64 << 20}},
		{"spilled", spill.Config{MemoryLimit: 16 << 10, Dir: t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			src, srcRC, _ := handNode(t, codec, tc.cfg, tasks, parts)
			for task := range tasks {
				if err := srcRC.Receive(ctx, src, summedTaskMsg(t, codec, gen, task, 0, tasks, parts)); err != nil {
					t.Fatal(err)
				}
			}
			dst, dstRC, dstCommits := handNode(t, codec, spill.Config{MemoryLimit: 64 << 20}, tasks, parts)
			// The adopter committed task 0 itself (a put after the move).
			if err := dstRC.Receive(ctx, dst, taskMsg(t, codec, gen, 0, tasks, parts)); err != nil {
				t.Fatal(err)
			}
			m := &shard.Msg{Shuffle: "s"}
			for p := range parts {
				err := srcRC.Export(ctx, src, uint32(p), func(e shard.Entry, sum shard.PartSum) error {
					m.Entries = append(m.Entries, e)
					if sum.Rows != e.Rows() || sum.Sum != fakeSum(e.Task, 0, uint32(p)) {
						t.Errorf("task %d partition %d: sum %+v for a piece of %d rows", e.Task, p, sum, e.Rows())
					}
					m.Ends = append(m.Ends, shard.End{Task: e.Task, Attempt: e.Attempt, Sums: []shard.PartSum{sum}})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			a, err := dstRC.Adopt(ctx, dst, m)
			if err != nil || a.Entries == 0 || a.Dropped != parts {
				t.Fatalf("Adopt: %+v, %v; want every entry but task 0's %d", a, err, parts)
			}
			again, err := dstRC.Adopt(ctx, dst, m)
			if err != nil || again.Entries != 0 || again.Dropped != len(m.Entries) {
				t.Fatalf("Adopt again: %+v, %v; want all dropped", again, err)
			}
			// A replay of task 5 that agrees with the rows handed over
			// commits quietly; one that differs is reported.
			for attempt, want := range []bool{false, true} {
				m := summedTaskMsg(t, codec, gen, 5, uint32(1+attempt), tasks, parts)
				if want {
					m.Ends[0].Sums[2].Sum++
				}
				before := len(*dstCommits)
				if err := dstRC.Receive(ctx, dst, m); err != nil {
					t.Fatal(err)
				}
				got := (*dstCommits)[before:]
				if len(got) != 1 || (got[0].Differs != nil) != want {
					t.Fatalf("replay %d of task 5: commits %+v, want one that differs: %v", attempt+1, got, want)
				}
			}
			src.Finish(shuffle.Sealed, nil)
			dst.Finish(shuffle.Sealed, nil)
			var total int64
			for p := range parts {
				want, got := readRows(t, srcRC, src, p), readRows(t, dstRC, dst, p)
				if got != want {
					t.Errorf("partition %d: %d rows after the handover, want %d", p, got, want)
				}
				total += got
			}
			if total != int64(gen.Rows) {
				t.Errorf("%d rows in all after the handover, want %d", total, gen.Rows)
			}
			if tc.cfg.Dir != "" && srcRC.cfg.Store.Stats().SpilledPieces == 0 {
				t.Error("nothing was spilled: the case does not test spilled pieces")
			}
		})
	}
}

// TestAdoptRefuses: an entry of several runs or of a partition the node
// does not own, and a message of a newer epoch, are not adopted.
func TestAdoptRefuses(t *testing.T) {
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sh, rc, _ := handNode(t, codec, spill.Config{MemoryLimit: 1 << 20}, 2, 2)
	msg := taskMsg(t, codec, table.GenConfig{Rows: 100, Seed: 1}, 0, 2, 2)
	msg.Ends = nil
	if _, err := rc.Adopt(context.Background(), sh, msg); err == nil {
		t.Error("an entry of two runs was adopted")
	}
	msg.Epoch = 1
	if _, err := rc.Adopt(context.Background(), sh, msg); err == nil {
		t.Error("a message of a newer epoch was adopted")
	}
}

// handNode is a receiver of a dataframe shuffle on node "a" alone, and the
// commits it reports.
func handNode(t *testing.T, codec *table.Codec, cfg spill.Config, tasks, parts int) (*Shuffle, *Receiver, *[]Commit) {
	t.Helper()
	store, err := spill.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var commits []Commit
	rc := New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
		Committed: func(_ *shuffle.State, c Commit) { commits = append(commits, c) }})
	return frameShuffle(t, codec, tasks, parts), rc, &commits
}

// summedTaskMsg is taskMsg of attempt with row sums in its end marker.
func summedTaskMsg(t *testing.T, codec *table.Codec, gen table.GenConfig, task int, attempt uint32, tasks, parts int) *shard.Msg {
	t.Helper()
	m := taskMsg(t, codec, gen, task, tasks, parts)
	m.Entries[0].Attempt, m.Ends[0].Attempt = attempt, attempt
	for _, r := range m.Entries[0].Runs {
		m.Ends[0].Sums = append(m.Ends[0].Sums, shard.PartSum{Partition: r.Partition, Rows: r.Count, Sum: fakeSum(uint64(task), 0, r.Partition)})
	}
	return m
}

// fakeSum stands for the row sum of a task's rows in partition p (the
// same for every attempt of a deterministic task).
func fakeSum(task uint64, _ uint32, p uint32) uint64 { return task*100 + uint64(p) + 1 }

func readRows(t *testing.T, rc *Receiver, sh *Shuffle, p int) int64 {
	t.Helper()
	var n int64
	err := rc.Get(context.Background(), sh, p, func(r arrow.Record) error {
		n += r.NumRows()
		r.Release()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
