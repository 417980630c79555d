package receiver

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
)

// A dataframe shuffle's receiver appends each entry's rows to the column
// buffers of their output partitions as the entry arrives (table.Appender),
// while the decoded entry is still in the cache: one accumulator per output
// partition, and a segment per (task, attempt, seq) piece saying which rows
// of it are whose. A read then sorts the partition's segments by key, keeps
// the committed ones (the dedup ledger, as for stored pieces) and gathers
// them from one set of buffers, instead of from a thousand decoded entries
// scattered through memory. A partition's buffers are chunks that are
// never moved (partAcc): a full one is followed by a new one. An entry goes
// to the accumulators only if the store's budget can take it
// (spill.Store.Reserve); otherwise its pieces are stored as before, and can
// spill. A read merges both, in key order.

// accumulators are the output partitions of one dataframe shuffle being
// accumulated here.
type accumulators struct {
	mu sync.Mutex
	// byPart is indexed by partition (a word per partition of the shuffle,
	// made with the first accumulator): a map cost a hash and a cache miss
	// per run of every entry.
	byPart []*partAcc
	// arena holds the accumulated bytes outside the Go heap (see offheap):
	// they cost the collector nothing and do not raise its heap goal. Its
	// memory lives as long as the Shuffle, which every reader of it holds.
	arena *offheap.Arena
	// blocks are the staged entries' rows, appended a stage at a time in
	// partition order, with their segments (stage.go); a partition's
	// blockRef with chunk c is in block -c-1. A block never changes once
	// its references are in.
	blocks []*block
	// newChunk makes a partition's chunk: its first one, when a run
	// arrives that is not staged.
	newChunk func() *table.Appender
}

// partAcc is one output partition's accumulated rows, in chunks: only the
// last chunk takes appends, and when it has no room for a run (its
// presized value and offset buffers are full) a new chunk starts, sized for
// as many rows as the partition already holds. So the partition's capacity
// doubles as it grows, as it would with a growing buffer, but nothing
// already held is copied, however wrong the first guess of its size was
// (a task put in many batches makes every entry, and so that guess, small).
type partAcc struct {
	mu     sync.Mutex
	chunks []*table.Appender // the last is being filled; none until a run is not staged
	segs   []accSeg          // of its own chunks, in arrival order
	brefs  []blockRef        // its runs in blocks, in the blocks' order
	// blockBytes is the partition's share of the blocks its staged runs
	// are in (see stage.go), as their rows' share of each block's bytes.
	blockBytes int64
	blockRows  int64
	newChunk   func() *table.Appender
	// bytes is the last chunk's Bytes as of its last append: what it grew
	// by is then one call to Bytes per run, not two, and since it bounds
	// every column's values, most runs fit its 32-bit offsets without a
	// look at the columns (fitsAll).
	bytes int64
}

// newPartAcc returns an accumulator whose chunks newChunk makes: none
// before a run that is not staged arrives (a partition of a shuffle of
// many more partitions than rows per task may only ever have staged
// runs, which are in blocks).
func newPartAcc(newChunk func() *table.Appender) *partAcc {
	return &partAcc{newChunk: newChunk}
}

// accSeg says that rows [off, off+rows) of chunk chunk (of block
// -chunk-1 when negative) are the piece of (task, attempt, seq) for the
// accumulator's partition. It is 32 bytes,
// two to a cache line: appending one is a store to a line no recent work
// touched (57% of appendRuns' own time when it was 48 bytes).
type accSeg struct {
	task         uint64
	attempt, seq uint32
	off          int64
	chunk, rows  int32 // a run fits: fitsAll refuses longer ones
}

// key is s's store key in partition p.
func (s accSeg) key(p uint32) spill.Key {
	return spill.Key{Partition: p, Task: s.task, Attempt: s.attempt, Seq: s.seq}
}

// last is the chunk being filled.
func (a *partAcc) last() *table.Appender { return a.chunks[len(a.chunks)-1] }

// held is the rows of all chunks.
func (a *partAcc) held() int64 {
	var n int64
	for _, c := range a.chunks {
		n += c.Rows()
	}
	return n
}

// chunkFor returns the chunk that takes the next rows rows (a sample of
// them: rows [off, off+n) of cols) and its index: the last chunk while it
// has room and the run's values (vals: var32Bytes of cols bounds them)
// keep its 32-bit offsets in range, else a new one presized for presize(rows) or the rows held,
// whichever is more. The first chunk is presized on its first run, from the
// shuffle's arena; later chunks are Go memory, as a grown buffer was: rows
// on the Go heap raise the collector's goal, and the node-side ops that
// follow the shuffle (a merge's join, a set-index's sort, and their
// Parquet writers) then collect less often and reuse pages the kernel
// would otherwise clear and map again. With every chunk in the arena, the
// bench's merge joined 0.4-0.7 s slower (4.59/4.76 s against 3.91/4.12 s).
func (a *partAcc) chunkFor(cols []table.ColumnView, off, rows, vals int64, presize func(int64) int64) (*table.Appender, int) {
	if len(a.chunks) == 0 {
		a.chunks = append(a.chunks, a.newChunk())
	}
	app := a.last()
	switch {
	case app.Rows() == 0:
		app.Presize(presize(rows), cols, off, rows)
	case !app.Room(rows) || (a.bytes+vals > math.MaxInt32 && !app.Fits(cols, off, rows)):
		app = app.Empty(nil)
		app.Presize(max(presize(rows), a.held()), cols, off, rows)
		a.chunks = append(a.chunks, app)
	}
	return app, len(a.chunks) - 1
}

// appendRun appends rows [off, off+rows) of cols, the piece of k's (task,
// attempt, seq), and its segment, and returns how many bytes a grew by.
// vals is var32Bytes(cols): a run that could overflow the last chunk's
// 32-bit offsets starts a new chunk (see chunkFor).
func (a *partAcc) appendRun(k accSeg, cols []table.ColumnView, off, rows, vals int64, presize func(int64) int64) int64 {
	chunks, before := len(a.chunks), a.bytes
	app, chunk := a.chunkFor(cols, off, rows, vals, presize)
	if len(a.chunks) > chunks {
		before = 0 // a new chunk: all its bytes are new
	}
	k.off, k.chunk, k.rows = app.Rows(), int32(chunk), int32(rows)
	a.segs = append(a.segs, k)
	app.Append(cols, off, rows)
	a.bytes = app.Bytes()
	return a.bytes - before + segBytes
}

// accsOf returns the accumulators of partitions parts, starting those not
// started yet.
func (sh *Shuffle) accsOf(parts []uint32) ([]*partAcc, error) {
	sh.accs.mu.Lock()
	defer sh.accs.mu.Unlock()
	accs := make([]*partAcc, len(parts))
	for i, p := range parts {
		a, err := sh.accLocked(p)
		if err != nil {
			return nil, err
		}
		accs[i] = a
	}
	return accs, nil
}

// accLocked returns partition p's accumulator, starting it (sh.accs.mu
// held).
func (sh *Shuffle) accLocked(p uint32) (*partAcc, error) {
	if int(p) < len(sh.accs.byPart) && sh.accs.byPart[p] != nil {
		return sh.accs.byPart[p], nil
	}
	if int(p) >= sh.Spec.Partitions {
		return nil, fmt.Errorf("shuffle %s: partition %d out of range (%d partitions)", sh.ID(), p, sh.Spec.Partitions)
	}
	if sh.accs.byPart == nil {
		if err := sh.startAccs(); err != nil {
			return nil, err
		}
	}
	a := newPartAcc(sh.accs.newChunk)
	sh.accs.byPart[p] = a
	return a, nil
}

// startAccs makes the shuffle's arena, its partitions' slice and the
// function that makes their chunks (sh.accs.mu held).
func (sh *Shuffle) startAccs() error {
	if _, err := table.NewAppender(sh.Schema); err != nil {
		return err // a type the appender cannot hold: refused before anything is kept
	}
	if sh.accs.arena == nil {
		sh.accs.arena = offheap.NewIn(sh.regions)
	}
	arena := sh.accs.arena
	sh.accs.newChunk = func() *table.Appender {
		app, _ := table.NewAppenderAlloc(sh.Schema, arena.Alloc) // the schema was checked
		return app
	}
	sh.accs.byPart = make([]*partAcc, sh.Spec.Partitions)
	return nil
}

// accumulated returns partition p's accumulator if it was started, with
// every staged entry appended.
func (sh *Shuffle) accumulated(p uint32) *partAcc {
	sh.drainStage()
	sh.accs.mu.Lock()
	defer sh.accs.mu.Unlock()
	if int(p) >= len(sh.accs.byPart) {
		return nil
	}
	return sh.accs.byPart[p]
}

// accumulate appends the runs of entry e (decoded as rec, with column
// views cols) to their partitions' accumulators, all or none. It reports
// false, having appended nothing, when the budget has no room or a
// partition's buffers would overflow: the caller stores pieces instead.
func (rc *Receiver) accumulate(sh *Shuffle, e *shard.Entry, rec arrow.Record, cols []table.ColumnView) (bool, error) {
	want := 2 * int64(len(e.Data)) // growth of the buffers, with their slack
	if !rc.cfg.Store.Reserve(sh.ID(), want) {
		return false, nil
	}
	accs, locked, err := sh.lockAccs(e.Runs)
	if err != nil || !fitsAll(accs, e.Runs, cols) {
		unlockAll(locked)
		rc.cfg.Store.Unreserve(sh.ID(), want)
		return false, err
	}
	grown := appendRuns(accs, e, cols, rc.presizer(sh, e, rec))
	unlockAll(locked)
	rc.settle(sh, want, grown)
	return true, nil
}

// lockAccs locks the accumulators of the runs' partitions, in partition
// order (every receiving goroutine locks in that order: no deadlock). It
// returns run i's accumulator as accs[i], and the locked ones, each once.
// (A map by partition cost a hash and a cache miss three times per run.)
func (sh *Shuffle) lockAccs(runs []shard.Run) (accs, locked []*partAcc, err error) {
	parts := make([]uint32, len(runs))
	for i, r := range runs {
		parts[i] = r.Partition
	}
	sorted := slices.IsSorted(parts)
	if !sorted {
		slices.Sort(parts)
	}
	parts = slices.Compact(parts)
	if locked, err = sh.accsOf(parts); err != nil {
		return nil, nil, err
	}
	for _, a := range locked {
		a.mu.Lock()
	}
	if sorted && len(parts) == len(runs) { // runs in partition order, one per partition: the usual entry
		return locked, locked, nil
	}
	accs = make([]*partAcc, len(runs))
	for i, r := range runs {
		k, _ := slices.BinarySearch(parts, r.Partition)
		accs[i] = locked[k]
	}
	return accs, locked, nil
}

func unlockAll(accs []*partAcc) {
	for _, a := range accs {
		a.mu.Unlock()
	}
}

// fitsAll reports whether every run fits its accumulator's offsets (run i
// goes to accs[i]), and a segment's count. A run goes to a chunk whose
// bytes (partAcc.bytes) and the entry's values together stay within 32-bit
// offsets without a look at the chunk's columns.
func fitsAll(accs []*partAcc, runs []shard.Run, cols []table.ColumnView) bool {
	var off int64
	vals := var32Bytes(cols)
	for i, r := range runs {
		if r.Count > math.MaxInt32 {
			return false
		}
		if accs[i].bytes+vals > math.MaxInt32 && (len(accs[i].chunks) == 0 || !accs[i].last().Fits(cols, off, int64(r.Count))) {
			return false
		}
		off += int64(r.Count)
	}
	return true
}

// var32Bytes is the bytes of the values of cols' columns with 32-bit
// offsets, summed.
func var32Bytes(cols []table.ColumnView) int64 {
	var n int64
	for _, c := range cols {
		if len(c.Offs32) > 0 {
			n += int64(c.Offs32[len(c.Offs32)-1] - c.Offs32[0])
		}
	}
	return n
}

// appendRuns appends every run (run i to accs[i]) and its segment; it
// returns how many bytes the accumulators grew by. A partition's first
// chunk is sized for presize(rows) rows (see partAcc.chunkFor).
func appendRuns(accs []*partAcc, e *shard.Entry, cols []table.ColumnView, presize func(int64) int64) int64 {
	var off, grown int64
	k, vals := accSeg{task: e.Task, attempt: e.Attempt, seq: e.Seq}, var32Bytes(cols)
	for i, r := range e.Runs {
		grown += accs[i].appendRun(k, cols, off, int64(r.Count), vals, presize)
		off += int64(r.Count)
	}
	return grown
}

// presizer guesses how many rows a partition will hold: the spec's Rows
// over its partitions when the client gave them, else the mean rows per
// partition of this entry (one task's rows for this node) times the tasks;
// with room for three standard deviations of a hash partition's count,
// within a share of the budget (half of it, which is what reservations may
// take, over the partitions this node holds), so that appends seldom move
// buffers and buffers are seldom much larger than their rows. The mean of a
// whole entry is a far steadier guess than a partition's first piece of a
// few rows, but it assumes one entry per task: a task put in 16 batches
// (set-index's files of 1M rows) made every partition a chain of 5
// chunks, mostly on the Go heap (see partAcc.chunkFor).
func (rc *Receiver) presizer(sh *Shuffle, e *shard.Entry, rec arrow.Record) func(int64) int64 {
	held := max(1, int64(sh.Spec.Partitions/max(1, len(sh.Route().Live))))
	share := rc.cfg.Store.MemoryLimit() / 2 / held
	perRow := max(1, int64(len(e.Data))/max(1, rec.NumRows()))
	mean := float64(sh.Spec.Rows) / float64(sh.Spec.Partitions)
	if sh.Spec.Rows <= 0 {
		mean = float64(rec.NumRows()) / float64(max(1, len(e.Runs))) * float64(sh.Spec.Tasks)
	}
	guess := int64(mean + mean/32 + 3*math.Sqrt(mean))
	return func(rows int64) int64 {
		return max(rows, min(guess, share/perRow))
	}
}

// segBytes is what a segment costs beyond its rows.
const segBytes = 32

// settle turns a reservation of want bytes into one of grown bytes.
func (rc *Receiver) settle(sh *Shuffle, want, grown int64) {
	if grown <= want {
		rc.cfg.Store.Unreserve(sh.ID(), want-grown)
		return
	}
	rc.cfg.Store.Charge(sh.ID(), grown-want)
}

// snapshot returns the accumulated rows of partition p, a record and its
// column views per chunk (its own, then the blocks its segments are in),
// and its segments sorted by key, their chunks numbered so; nil when
// nothing was accumulated. The caller releases the records.
func (sh *Shuffle) snapshot(p uint32) ([]arrow.Record, [][]table.ColumnView, []accSeg) {
	a := sh.accumulated(p)
	if a == nil {
		return nil, nil, nil
	}
	a.mu.Lock()
	segs, blocks := sh.localSegs(a, nil)
	recs, cols := make([]arrow.Record, 0, len(a.chunks)+len(blocks)), make([][]table.ColumnView, 0, len(a.chunks)+len(blocks))
	for _, app := range a.chunks {
		rec := app.Record()
		recs, cols = append(recs, rec), append(cols, table.ViewOf(rec))
	}
	segs = sortedSegs(segs)
	a.mu.Unlock()
	for _, b := range blocks {
		b.rec.Retain()
		recs, cols = append(recs, b.rec), append(cols, b.cols)
	}
	return recs, cols, segs
}

// views returns the accumulated rows of partition p as column views and
// row counts per chunk (its own, then the blocks its segments are in), and
// its segments sorted by key, their chunks numbered so, in sc's memory
// (reused from one read to the next); nil when nothing was accumulated.
// What a read needs of snapshot, without a record per chunk: the views
// alias the accumulator's memory, which lives as long as sh (the caller
// keeps sh alive while it reads them).
func (sh *Shuffle) views(p uint32, sc *mergeScratch) ([][]table.ColumnView, []int64, []accSeg) {
	a := sh.accumulated(p)
	if a == nil {
		return nil, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	segs, blocks := sh.localSegs(a, sc.local)
	n := len(a.chunks) + len(blocks)
	sc.cols, sc.rows = slices.Grow(sc.cols[:0], n)[:n], slices.Grow(sc.rows[:0], n)[:n]
	for i, app := range a.chunks {
		sc.cols[i], sc.rows[i] = app.Views()
	}
	for i, b := range blocks {
		sc.cols[len(a.chunks)+i], sc.rows[len(a.chunks)+i] = b.cols, b.rec.NumRows()
	}
	if len(a.brefs) > 0 {
		sc.local = segs
	}
	sc.segs, sc.at = sortSegsInto(sc.segs, sc.at, segs)
	return sc.cols, sc.rows, sc.segs
}

// localSegs returns a's segments, those of its own chunks and those of
// its runs in blocks, (in local's memory) with their chunks numbered as
// its own chunks followed by the blocks it references, and those blocks
// (a.mu held); a's own segments when it has no run in a block.
func (sh *Shuffle) localSegs(a *partAcc, local []accSeg) ([]accSeg, []*block) {
	if len(a.brefs) == 0 {
		return a.segs, nil
	}
	runs := 0
	for _, ref := range a.brefs {
		runs += int(ref.n)
	}
	segs := slices.Grow(append(local[:0], a.segs...), runs)
	sh.accs.mu.Lock()
	all := sh.accs.blocks
	sh.accs.mu.Unlock()
	blocks := make([]*block, len(a.brefs))
	for i, ref := range a.brefs {
		b := all[-ref.chunk-1]
		blocks[i] = b
		chunk, off := int32(len(a.chunks)+i), ref.off
		for _, r := range b.runs[ref.first : ref.first+ref.n] {
			k := b.keys[r.entry]
			segs = append(segs, accSeg{task: k.task, attempt: k.attempt, seq: k.seq, off: off, chunk: chunk, rows: r.rows})
			off += int64(r.rows)
		}
	}
	return segs, blocks
}

// sortedSegs returns a copy of one partition's segments sorted by key, in
// time linear in their number whatever the task count. They arrive in
// arrival order: in key order when tasks were put one after another (then
// one pass checks it), else in no order of task, about one per task for a
// partition of a hash shuffle. Those are spread by task over up to twice
// as many buckets as segments (the task's offset from the least one,
// shifted right until the span fits), counted into place, and each bucket
// (a task or a few: a task's attempts and seqs stay together) sorted by
// comparison. Sorting all of them by comparison took 0.47 s of the 1.9 s
// of reads of a 10,000 x 10,000 demo of 100 MiB, whose partitions have
// rows of about 260 tasks each (a counting sort by task was linear only
// for partitions with rows of most tasks).
func sortedSegs(segs []accSeg) []accSeg {
	out, _ := sortSegsInto(nil, nil, segs)
	return out
}

// sortSegsInto is sortedSegs in the memory of out and of at, its scratch
// (either may be nil; both are grown as needed and returned).
func sortSegsInto(out []accSeg, at []int32, segs []accSeg) ([]accSeg, []int32) {
	out = slices.Grow(out[:0], len(segs))[:len(segs)]
	if slices.IsSortedFunc(segs, compareSegs) {
		copy(out, segs)
		return out, at
	}
	if len(segs) < 32 {
		copy(out, segs)
		slices.SortFunc(out, compareSegs)
		return out, at
	}
	lo, shift := taskBuckets(segs)
	nb := 2*len(segs) + 1 // where each bucket starts (at most twice as many as segments)
	at = slices.Grow(at[:0], nb)[:nb]
	clear(at)
	for _, s := range segs {
		at[(s.task-lo)>>shift+1]++
	}
	for b := 1; b < len(at); b++ {
		at[b] += at[b-1]
	}
	for _, s := range segs {
		b := (s.task - lo) >> shift
		out[at[b]] = s
		at[b]++
	}
	sortRuns(out, lo, shift)
	return out, at
}

// taskBuckets returns the least task of segs and the shift that maps the
// span of their tasks to at most twice as many buckets as segments: bucket
// (task-lo)>>shift.
func taskBuckets(segs []accSeg) (lo uint64, shift uint) {
	lo, hi := segs[0].task, segs[0].task
	for _, s := range segs[1:] {
		lo, hi = min(lo, s.task), max(hi, s.task)
	}
	for (hi-lo)>>shift >= uint64(2*len(segs)) {
		shift++
	}
	return lo, shift
}

// sortRuns sorts each bucket of out (segments counted into place by
// bucket (task-lo)>>shift) by key.
func sortRuns(out []accSeg, lo uint64, shift uint) {
	for i := 0; i < len(out); {
		b, j := (out[i].task-lo)>>shift, i+1
		for j < len(out) && (out[j].task-lo)>>shift == b {
			j++
		}
		switch {
		case j-i > 8:
			slices.SortFunc(out[i:j], compareSegs)
		case j-i > 1:
			insertionSort(out[i:j])
		}
		i = j
	}
}

// insertionSort sorts a few segments by key.
func insertionSort(segs []accSeg) {
	for i := 1; i < len(segs); i++ {
		for j := i; j > 0 && compareSegs(segs[j], segs[j-1]) < 0; j-- {
			segs[j], segs[j-1] = segs[j-1], segs[j]
		}
	}
}

// compareSegs orders one partition's segments by key.
func compareSegs(x, y accSeg) int { return x.key(0).Compare(y.key(0)) }
