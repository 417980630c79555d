package service_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

// frame is a synthetic dataframe shuffle: table.GenTask data, hashed on
// "key", each task's rows put as batches of at most batchRows.
type frame struct {
	id                string
	tasks, partitions int
	gen               table.GenConfig
	batchRows         int64
}

func newFrame(id string, tasks, partitions int, rows int64, seed uint64) frame {
	return frame{id: id, tasks: tasks, partitions: partitions, batchRows: 1000,
		gen: table.GenConfig{Rows: rows, Seed: seed, KeyCardinality: 1 << 16, PayloadBytes: 16}}
}

func (f frame) spec() *spec.Spec {
	codec, _ := table.NewCodec(table.GenSchema(), nil)
	return &spec.Spec{ID: f.id, Kind: spec.Dataframe, Tasks: f.tasks, Partitions: f.partitions,
		Schema: codec.SchemaBytes(), Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}}
}

// batches returns task's record batches.
func (f frame) batches(task int) []arrow.Record {
	rec := table.GenTask(memory.DefaultAllocator, f.gen, task, f.tasks)
	defer rec.Release()
	var out []arrow.Record
	for off := int64(0); off < rec.NumRows(); off += f.batchRows {
		out = append(out, table.Slice(rec, off, min(f.batchRows, rec.NumRows()-off)))
	}
	return out
}

func (f frame) input() input { return input{recs: f.batches} }

// outcome is what a dataframe shuffle holds, per partition: the row ids in
// the order they are read, and a checksum of the rows' contents.
type outcome struct {
	ids  [][]int64
	sums []uint64
}

func newOutcome(partitions int) *outcome {
	return &outcome{ids: make([][]int64, partitions), sums: make([]uint64, partitions)}
}

// add accounts rec's rows to partition p, or, with p < 0, to the partition
// part gives each row. It returns the first row found in the wrong
// partition.
func (o *outcome) add(part *table.Partitioner, rec arrow.Record, p int) error {
	pids, err := part.Partition(rec, nil)
	if err != nil {
		return err
	}
	ids := rec.Column(1).(*array.Int64)
	for i, q := range pids {
		if p >= 0 && int(q) != p {
			return fmt.Errorf("row id %d read from partition %d, its key maps to %d", ids.Value(i), p, q)
		}
		o.ids[q] = append(o.ids[q], ids.Value(i))
		o.sums[q] += rowHash(rec, i)
	}
	return nil
}

// rowHash hashes every column of row i of a table.GenSchema record.
func rowHash(rec arrow.Record, i int) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for c := range 2 {
		binary.LittleEndian.PutUint64(b[:], uint64(rec.Column(c).(*array.Int64).Value(i)))
		h.Write(b[:])
	}
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(rec.Column(2).(*array.Float64).Value(i)))
	h.Write(b[:])
	h.Write([]byte(rec.Column(3).(*array.String).Value(i)))
	return h.Sum64()
}

// expect computes the outcome from the input alone: ids of task t are
// contiguous and ascending with t, so (task, order) order is id order.
func (f frame) expect(t *testing.T) *outcome {
	part := f.partitioner(t)
	o := newOutcome(f.partitions)
	for task := range f.tasks {
		for _, rec := range f.batches(task) {
			if err := o.add(part, rec, -1); err != nil {
				t.Fatal(err)
			}
			rec.Release()
		}
	}
	return o
}

func (f frame) partitioner(t *testing.T) *table.Partitioner {
	part, err := table.NewPartitioner(table.GenSchema(), f.spec().Rule, f.partitions)
	if err != nil {
		t.Fatal(err)
	}
	return part
}

// collect reads every partition of f back from its owner.
func (c *simCluster) collect(ctx context.Context, t *testing.T, f frame) *outcome {
	part := f.partitioner(t)
	o := newOutcome(f.partitions)
	for p := range f.partitions {
		c.read(ctx, f.id, p, func(rec arrow.Record) {
			if err := o.add(part, rec, p); err != nil {
				t.Error(err)
			}
		})
	}
	return o
}

// diff describes the first difference of got from want, or "".
func (want *outcome) diff(got *outcome) string {
	for p := range want.ids {
		w, g := want.ids[p], got.ids[p]
		switch {
		case len(w) != len(g):
			return fmt.Sprintf("partition %d: %d rows, want %d", p, len(g), len(w))
		case !slices.Equal(w, g):
			i := slices.IndexFunc(w, func(id int64) bool { return !slices.Contains(g, id) })
			return fmt.Sprintf("partition %d: rows differ or out of (task, order) order (first missing id at %d)", p, i)
		case want.sums[p] != got.sums[p]:
			return fmt.Sprintf("partition %d: checksum %x, want %x", p, got.sums[p], want.sums[p])
		}
	}
	return ""
}

func spilled(c *simCluster) int64 {
	var n int64
	for _, s := range c.svcs {
		n += s.Stats().Store.SpilledBytes
	}
	return n
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// tinyBudget makes the spill store spill to badger after a few pieces.
const tinyBudget = 256 << 10

// TestSimConservation: every row arrives exactly once, in the partition
// its key maps to, with the rows and checksums of the input, for any node
// count and spill threshold.
func TestSimConservation(t *testing.T) {
	t.Parallel()
	f := newFrame("", 12, 17, 20_000, 7)
	want := f.expect(t)
	for _, nodes := range []int{1, 2, 3, 5} {
		for _, budget := range []int64{64 << 20, tinyBudget} {
			t.Run(fmt.Sprintf("%d nodes budget %d KiB", nodes, budget>>10), func(t *testing.T) {
				t.Parallel()
				c := startSim(t, nodes, service.Config{MemoryLimit: budget}, simnet.Config{})
				f := f
				f.id = "cons"
				ctx := testCtx(t)
				c.run(ctx, f.spec(), f.input())
				if d := want.diff(c.collect(ctx, t, f)); d != "" {
					t.Fatal(d)
				}
				if s := spilled(c); (budget == tinyBudget) != (s > 0) {
					t.Errorf("spilled %d bytes with a budget of %d", s, budget)
				}
			})
		}
	}
}

// shardsOnly limits faults to shard frames: the service retries those
// (receivers drop a resent entry by its seq), so they are the frames a real
// network delivers twice or whose reply it loses and the sender resends.
// A control frame is sent once (opCreate is not idempotent: a second
// delivery is refused as ErrExists).
func shardsOnly(_, _ string, t wire.Type) bool { return t == wire.TypeShards }

// TestSimMetamorphic: the same input gives the same partitions, row for
// row in (task, order) order, whatever the node count, memory budget,
// output batch size, and message order (seeded jitter and duplicates).
func TestSimMetamorphic(t *testing.T) {
	t.Parallel()
	f := newFrame("meta", 9, 11, 12_000, 3)
	want := f.expect(t)
	for _, tc := range []struct {
		name  string
		nodes int
		svc   service.Config
		net   simnet.Config
	}{
		{"1 node", 1, service.Config{}, simnet.Config{}},
		{"2 nodes tiny budget", 2, service.Config{MemoryLimit: tinyBudget}, simnet.Config{}},
		{"3 nodes jitter", 3, service.Config{OutputBatchRows: 100}, simnet.Config{MaxDelay: 2 * time.Millisecond}},
		{"3 nodes jitter and duplicates", 3, service.Config{}, simnet.Config{MaxDelay: time.Millisecond, Duplicate: 0.3, Faulty: shardsOnly}},
		{"5 nodes tiny budget duplicates", 5, service.Config{MemoryLimit: tinyBudget, OutputBatchRows: 7}, simnet.Config{MaxDelay: time.Millisecond, Duplicate: 0.3, Faulty: shardsOnly}},
		{"4 nodes lossy", 4, service.Config{MemoryLimit: tinyBudget}, simnet.Config{MaxDelay: time.Millisecond, DropRequest: 0.1, DropReply: 0.1, Duplicate: 0.1, Faulty: shardsOnly}},
	} {
		for _, seed := range []uint64{1, 2} {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				t.Parallel()
				ncfg := tc.net
				ncfg.Rand = rand.New(rand.NewPCG(seed, 0))
				c := startSim(t, tc.nodes, tc.svc, ncfg)
				ctx := testCtx(t)
				c.run(ctx, f.spec(), f.input())
				if d := want.diff(c.collect(ctx, t, f)); d != "" {
					t.Fatal(d)
				}
			})
		}
	}
}

// TestSimArenaFreed: a closed shuffle's accumulated rows and assembled
// array chunks, held outside the Go heap (offheap), are unmapped once the
// shuffle is gone (or, with the nodes' region pools on, kept in those pools
// only, and unmapped when the nodes close): nothing keeps a dropped
// shuffle's receive state reachable.
func TestSimArenaFreed(t *testing.T) {
	dt, err := rechunk.ParseDType("<i4")
	if err != nil {
		t.Fatal(err)
	}
	g := grid{old: spec.Chunks{{40, 40}, {50, 50}}, new: spec.Chunks{{20, 20, 20, 20}, {100}}, dt: dt}
	f := newFrame("arena", 8, 11, 20_000, 3)
	for _, tc := range []struct {
		name string
		sp   *spec.Spec
		in   input
	}{
		{"dataframe", f.spec(), f.input()},
		{"array", spec.ArraySpec("arena-array", "<i4", g.old, g.new), input{chunk: func(task int) rechunk.Chunk { return g.chunk(g.old, task) }}},
	} {
		for _, keep := range []time.Duration{-1, time.Minute} {
			t.Run(fmt.Sprintf("%s/keep=%v", tc.name, keep), func(t *testing.T) { checkArenaFreed(t, tc.sp, tc.in, keep) })
		}
	}
}

// checkArenaFreed runs sp on 3 nodes that keep freed regions for keep,
// checks that it held memory in arenas, closes it and checks that the
// arenas were unmapped or pooled, and that closing the nodes unmaps the
// pooled ones.
func checkArenaFreed(t *testing.T, sp *spec.Spec, in input, keep time.Duration) {
	c := startSim(t, 3, service.Config{MemoryLimit: 64 << 20, KeepRegions: keep}, simnet.Config{})
	ctx := testCtx(t)
	c.run(ctx, sp, in)
	if mapped, _ := arenaBytes(c); mapped == 0 {
		t.Fatal("arenas hold nothing during the shuffle: nothing was held off the heap")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // only the nodes' own collections run
	if err := c.svcs[0].CloseShuffle(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	waitReclaimed(t, c)
	after, pooled := settledArenas(c)
	if after > pooled || keep < 0 && pooled != 0 || keep > 0 && pooled == 0 {
		t.Fatalf("arenas hold %d bytes after the close (%d of them pooled)", after, pooled)
	}
	for _, s := range c.svcs {
		s.Close()
	}
	if after, _ := settledArenas(c); after > 0 {
		t.Fatalf("arenas hold %d bytes after the nodes closed", after)
	}
}

// arenaBytes returns the arena memory the nodes of c hold mapped, and how
// much of it they keep pooled.
func arenaBytes(c *simCluster) (mapped, pooled int64) {
	for _, s := range c.svcs {
		st := s.Stats()
		mapped, pooled = mapped+st.MappedBytes, pooled+st.PooledBytes
	}
	return mapped, pooled
}

// waitReclaimed waits, without collecting garbage itself, until the
// closed shuffle's arenas are unmapped or pooled: the nodes collect when
// they drop a shuffle that held arena memory.
func waitReclaimed(t *testing.T, c *simCluster) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mapped, pooled := arenaBytes(c)
		if mapped <= pooled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("arenas hold %d bytes (%d pooled) 10 s after the close: the nodes did not reclaim them", mapped, pooled)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settledArenas collects garbage until the nodes' mapped arena bytes stop
// falling (cleanups run after a collection, on their own goroutine), and
// returns them with the pooled bytes.
func settledArenas(c *simCluster) (mapped, pooled int64) {
	last, _ := arenaBytes(c)
	for range 50 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		n, p := arenaBytes(c)
		if m, _ := arenaBytes(c); n == last && n == m {
			return n, p
		}
		last = n
	}
	return arenaBytes(c)
}
