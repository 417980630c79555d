package receiver

import (
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/table"
)

// An entry of a shuffle with many more partitions than a task has rows for
// this node holds about a row per partition: appending it run by run
// touches the buffers, segments and locks of a partition for each row,
// scattered through memory (each run cost ~750 ns at 10,000 x 10,000,
// 20% of the nodes' CPU, nearly all of it cache misses). Such entries are
// staged instead: the decoded entry is kept as it arrived, and once the
// stage holds stageBytes (or a read needs the partitions) its entries'
// runs are appended partition by partition, so that each partition's
// state is touched once for the rows of many tasks. The stage is small
// enough for its entries to stay in cache meanwhile: with 8 MiB, the
// copies missed the cache on the source side instead (appending took 19%
// of the in-process 10,000 x 10,000 demo's CPU, as run by run; 11-12%
// with 256 KiB or 1 MiB).
//
// A staged entry counts as stored (its attempt may commit): its rows are
// in memory, charged to the store's budget like accumulated ones, and
// every read of an accumulator appends the stage first (accumulated).

// stageBytes is the entry bytes a stage holds before its entries are
// appended.
const stageBytes = 1 << 20

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

// appendStaged appends the runs of batch partition by partition.
func (rc *Receiver) appendStaged(sh *Shuffle, batch []staged) {
	parts, byPart := groupStagedRuns(batch, sh.Spec.Partitions)
	accs, err := sh.accsOf(parts)
	if err != nil {
		// partitions were checked against the spec when each entry came
		panic("receiver: staged entry of shuffle " + sh.ID() + ": " + err.Error())
	}
	var want, grown int64
	for _, s := range batch {
		want += s.want
	}
	for i, a := range accs {
		a.mu.Lock()
		grown += a.appendStagedRuns(batch, byPart[i])
		a.mu.Unlock()
	}
	rc.settle(sh, want, grown)
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
