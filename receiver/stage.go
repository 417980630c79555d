package receiver

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// An entry of a shuffle with many more partitions than a task has rows for
// this node holds about a row per partition: appending it run by run
// touches the buffers, segments and locks of a partition for each row,
// scattered through memory (each run cost ~750 ns at 10,000 x 10,000,
// 20% of the nodes' CPU, nearly all of it cache misses). Such entries are
// staged instead: the decoded entry is kept as it arrived, and once the
// stage holds stageBytes (or a read needs the partitions) its entries'
// runs are appended partition by partition, into a block of their own
// (see block below).
//
// A block's rows are gathered from the staged entries at random, so the
// stage should stay in cache; but a partition's rows are spread over the
// blocks, which a read gathers them from, so blocks should be few. At
// 1,000 x 100,000 and 488 MiB on 4 processes, a stage of 1 MiB made about
// 120 blocks per node and reads of 2.8 s; 4 MiB read in 2.1-2.2 s for
// the same puts, and 16 MiB in the same time as 4 with 60-90 MiB more
// peak RSS per node. Since a block's runs are in task order (see
// compareStaged), a read copies a partition's rows of a block as one range
// when the partition has several rows there: at 10,000 x 10,000, 8 MiB
// then took 5-18% less node CPU than 4 (3 rounds), with 6-24 MiB more
// peak RSS; at 1,000 x 100,000 (a row per partition and block either
// way) the two were within the noise.
//
// A staged entry counts as stored (its attempt may commit): its rows are
// in memory, charged to the store's budget like accumulated ones, and
// every read of an accumulator appends the stage first (accumulated).

// stageBytes is the entry bytes a stage holds before its entries are
// appended.
const stageBytes = 8 << 20

// stageMaxEntries bounds the entries of one stage.
const stageMaxEntries = 4096

// stagedRowsPerRun is the mean rows per run below which an entry is
// staged rather than appended at once.
const stagedRowsPerRun = 4

// staged is one decoded entry waiting in a stage.
type staged struct {
	e       shard.Entry // its runs and key; Data is not read again
	rec     arrow.Record
	cols    []table.ColumnView
	presize func(int64) int64
	want    int64 // reserved of the store's budget
	vals    int64 // var32Bytes of cols
}

// stage is a dataframe shuffle's staged entries.
type stage struct {
	mu      sync.Mutex
	entries []staged
	bytes   int64
	held    atomic.Int64 // len(entries), read without mu
	rc      *Receiver    // set by the first stageEntry
	// flushing is held while entries taken from the stage are appended:
	// a read that finds the stage empty waits for them.
	flushing sync.Mutex
}

// stageEntry stages e (decoded as rec) if its runs are tiny and the budget
// has room; it reports whether it did (rec is then retained) and appends
// the stage when it is full.
func (rc *Receiver) stageEntry(sh *Shuffle, e *shard.Entry, rec arrow.Record, cols []table.ColumnView) bool {
	if len(e.Runs) == 0 || rec.NumRows() >= stagedRowsPerRun*int64(len(e.Runs)) {
		return false
	}
	want := 2 * int64(len(e.Data)) // growth of the buffers, with their slack, as accumulate
	if !rc.cfg.Store.Reserve(sh.ID(), want) {
		return false
	}
	rec.Retain()
	s := staged{e: *e, rec: rec, cols: cols, presize: rc.presizer(sh, e, rec), want: want, vals: var32Bytes(cols)}
	s.e.Data, s.e.Parts = nil, nil
	st := &sh.stage
	st.mu.Lock()
	st.rc = rc
	st.entries = append(st.entries, s)
	st.bytes += int64(len(e.Data))
	st.held.Store(int64(len(st.entries)))
	full := st.bytes >= stageBytes || len(st.entries) >= stageMaxEntries
	st.mu.Unlock()
	if full {
		rc.flushStage(sh)
	}
	return true
}

// flushStage appends every staged entry of sh to the accumulators. It
// returns once entries staged before the call are appended, also those
// another goroutine took first.
func (rc *Receiver) flushStage(sh *Shuffle) {
	st := &sh.stage
	st.flushing.Lock()
	defer st.flushing.Unlock()
	batch := st.take()
	if len(batch) == 0 {
		return
	}
	defer func() {
		for _, s := range batch {
			s.rec.Release()
		}
	}()
	rc.appendStaged(sh, batch)
}

// drainStage appends what sh's stage holds, and waits for the entries a
// flush in progress took: a reader of an accumulator calls it first.
func (sh *Shuffle) drainStage() {
	st := &sh.stage
	st.mu.Lock()
	rc := st.rc
	st.mu.Unlock()
	if rc != nil {
		rc.flushStage(sh)
	}
}

// discard releases what the stage holds without appending it: the
// shuffle is being dropped (Shuffle.Close), and its budget with it.
func (st *stage) discard() {
	st.flushing.Lock()
	defer st.flushing.Unlock()
	for _, s := range st.take() {
		s.rec.Release()
	}
}

// take empties the stage and returns what it held.
func (st *stage) take() []staged {
	st.mu.Lock()
	defer st.mu.Unlock()
	batch := st.entries
	st.entries, st.bytes = nil, 0
	st.held.Store(0)
	return batch
}

// stagedRun is one run of a staged entry: entry, its first row and rows.
type stagedRun struct {
	entry     int32
	off, rows int64
}

// appendStaged sorts batch by key and appends its runs partition by
// partition, in that order: into a block of their own (appendBlock), or, if
// that cannot take them, to each partition's chunks.
func (rc *Receiver) appendStaged(sh *Shuffle, batch []staged) {
	slices.SortFunc(batch, compareStaged)
	parts, byPart := groupStagedRuns(batch, sh.Spec.Partitions)
	accs, err := sh.accsOf(parts)
	if err != nil {
		// partitions were checked against the spec when each entry came
		panic("receiver: staged entry of shuffle " + sh.ID() + ": " + err.Error())
	}
	var want int64
	for _, s := range batch {
		want += s.want
	}
	grown, ok := sh.appendBlock(batch, accs, byPart)
	if !ok {
		for i, a := range accs {
			a.mu.Lock()
			grown += a.appendStagedRuns(batch, byPart[i])
			a.mu.Unlock()
		}
	}
	rc.settle(sh, want, grown)
}

// A stage's runs went to the chunks of their partitions, a few rows to
// each: at 1,000 tasks x 100,000 partitions every run was a row, and
// appending it touched its partition's state, buffers and segments, cold
// in memory (one partition's of 25,000 on a node): 25% of the nodes' CPU.
// A stage now becomes a block: one record of its rows gathered in
// partition order, written straight through (table.GatherRuns from the
// stage, which is still in cache). The block holds its runs' segments
// itself, in the same order, 8 bytes a run (the staged entries' keys once
// per block), and each partition gets one reference per block: a segment
// of 32 bytes per run in each partition's own list was as many bytes as
// the rows at a row per run, and a store to a cold line per run. A read of
// the partition gathers its rows from its chunks and the blocks it
// references, as it gathers from chunks.

// block is the rows of one stage's entries, in partition order, and their
// segments; it is never written once its references are in.
type block struct {
	rec  arrow.Record
	cols []table.ColumnView
	keys []blockKey // the staged entries' keys, by entry
	runs []blockRun // in the rows' order
}

// blockKey is one staged entry's dedup key.
type blockKey struct {
	task         uint64
	attempt, seq uint32
}

// blockRun is rows rows of a block's entry entry.
type blockRun struct {
	entry, rows int32
}

// blockRef is a partition's runs in one block: runs [first, first+n) of
// block -chunk-1, whose rows start at row off.
type blockRef struct {
	chunk, first, n int32
	off             int64
}

// blockRefBytes is what a partition's reference to a block costs, and
// blockRunBytes what a run in a block costs beyond its rows.
const (
	blockRefBytes = 24
	blockRunBytes = 8
)

// appendBlock gathers the runs of batch (byPart[i] to accs[i], as
// groupStagedRuns grouped them) into a new block of sh, with their
// segments, gives each partition a reference to its runs there, and returns
// the bytes it took; false, having done nothing, if the runs do not fit a
// block (a run of more rows than a segment counts, or values past a
// block's 32-bit offsets).
func (sh *Shuffle) appendBlock(batch []staged, accs []*partAcc, byPart [][]stagedRun) (int64, bool) {
	var vals int64
	for _, s := range batch {
		vals += s.vals
	}
	n := 0
	for _, runs := range byPart {
		n += len(runs)
	}
	if vals > math.MaxInt32 || n > math.MaxInt32 {
		return 0, false
	}
	b := &block{keys: make([]blockKey, len(batch)), runs: make([]blockRun, 0, n)}
	srcs := make([]table.Source, len(batch))
	for i, s := range batch {
		srcs[i] = table.Source{Cols: s.cols, Rows: s.rec.NumRows()}
		b.keys[i] = blockKey{task: s.e.Task, attempt: s.e.Attempt, seq: s.e.Seq}
	}
	runs := make([]table.SourceRun, 0, n)
	for _, part := range byPart {
		for _, r := range part {
			if r.rows > math.MaxInt32 {
				return 0, false
			}
			runs = append(runs, table.SourceRun{Src: r.entry, Off: r.off, Rows: r.rows})
			b.runs = append(b.runs, blockRun{entry: r.entry, rows: int32(r.rows)})
		}
	}
	sh.accs.mu.Lock()
	arena := sh.accs.arena
	sh.accs.mu.Unlock()
	rec, err := table.GatherRuns(arenaAllocator{arena}, sh.Schema, srcs, runs)
	if err != nil {
		return 0, false
	}
	b.rec, b.cols = rec, table.ViewOf(rec)
	id, size := sh.addBlock(b), table.RecordBytes(rec)
	var off int64
	first := int32(0)
	for i, a := range accs {
		var rows int64
		for _, r := range byPart[i] {
			rows += r.rows
		}
		a.mu.Lock()
		a.brefs = append(a.brefs, blockRef{chunk: id, first: first, n: int32(len(byPart[i])), off: off})
		a.blockBytes += max(1, size*rows/max(1, rec.NumRows()))
		a.blockRows += rows
		a.mu.Unlock()
		first += int32(len(byPart[i]))
		off += rows
	}
	return size + blockRunBytes*int64(n) + blockRefBytes*int64(len(accs)), true
}

// addBlock keeps b as sh's next block and returns the chunk number its
// references carry.
func (sh *Shuffle) addBlock(b *block) int32 {
	sh.accs.mu.Lock()
	defer sh.accs.mu.Unlock()
	sh.accs.blocks = append(sh.accs.blocks, b)
	return int32(-len(sh.accs.blocks))
}

// arenaAllocator is a memory.Allocator of an arena's memory, which lives
// as long as the arena: Free does nothing.
type arenaAllocator struct{ a *offheap.Arena }

func (m arenaAllocator) Allocate(n int) []byte { return m.a.Alloc(n) }

func (m arenaAllocator) Reallocate(n int, b []byte) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	out := m.a.Alloc(n)
	copy(out, b)
	return out
}

func (arenaAllocator) Free([]byte) {}

// compareStaged orders staged entries by their store key within a
// partition (task, attempt, seq: spill.Key's order), the order a read's
// merge serves a partition's rows in. A block gathered from entries in that
// order holds each partition's runs in it too: a read then finds a block's
// runs of a partition consecutive in its merge and copies them as one
// range, where in arrival order (the senders' tasks interleaved) it copied
// them run by run, a row each at 10,000 x 10,000.
func compareStaged(x, y staged) int { return x.key().Compare(y.key()) }

// key is s's store key in partition 0 (a read compares keys of one
// partition).
func (s *staged) key() spill.Key {
	return spill.Key{Task: s.e.Task, Attempt: s.e.Attempt, Seq: s.e.Seq}
}

// groupStagedRuns returns the partitions the runs of batch go to,
// ascending, and for each its runs, in the order they came (a counting
// sort by partition).
func groupStagedRuns(batch []staged, partitions int) ([]uint32, [][]stagedRun) {
	counts := make([]int32, partitions+1)
	total := 0
	for _, s := range batch {
		for _, r := range s.e.Runs {
			counts[r.Partition+1]++
		}
		total += len(s.e.Runs)
	}
	var parts []uint32
	for p := range partitions {
		if counts[p+1] > 0 {
			parts = append(parts, uint32(p))
		}
		counts[p+1] += counts[p]
	}
	runs := make([]stagedRun, total)
	for i, s := range batch {
		var off int64
		for _, r := range s.e.Runs {
			runs[counts[r.Partition]] = stagedRun{entry: int32(i), off: off, rows: int64(r.Count)}
			counts[r.Partition]++
			off += int64(r.Count)
		}
	}
	byPart := make([][]stagedRun, len(parts))
	lo := 0
	for i := range parts {
		hi := int(counts[parts[i]])
		byPart[i] = runs[lo:hi]
		lo = hi
	}
	return parts, byPart
}

// appendStagedRuns appends runs (of batch's entries) to a and returns how
// many bytes it grew by (a.mu held).
func (a *partAcc) appendStagedRuns(batch []staged, runs []stagedRun) int64 {
	var grown int64
	for _, r := range runs {
		s := &batch[r.entry]
		k := accSeg{task: s.e.Task, attempt: s.e.Attempt, seq: s.e.Seq}
		grown += a.appendRun(k, s.cols, r.off, r.rows, s.vals, s.presize)
	}
	return grown
}
