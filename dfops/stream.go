package dfops

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// LeadSide is the side of a join of How how whose rows lead the output order
// (see the package documentation): 0, the left, for Inner, Left and Outer; 1,
// the right, for Right. A StreamJoin takes that side record by record.
func LeadSide(how How) int {
	if how == Right {
		return 1
	}
	return 0
}

// StreamJoin is HashJoinBatches with the lead side (LeadSide) streamed: the
// other side, the build side, is held whole in a hash table, and the lead
// side's records are joined as they come (Add), so that side is never in
// memory at once. The result, its columns and its row order are those of
// HashJoinBatches on the concatenation of the lead records, except that the
// records handed to fn break at the lead records' ends as well as at
// batchRows. The hash table is always on the build side, whatever the sizes.
//
// Add the lead records in order, then call Finish once (an Outer join then
// emits the build rows that matched nothing); Release in every case. A
// StreamJoin is not safe for concurrent use.
type StreamJoin struct {
	mem       memory.Allocator
	lay       *layout
	lead      int
	leadSch   *arrow.Schema
	leadRows  int64
	build     arrow.Record
	buildKeys []arrow.Array
	table     *hashTable
	seed      maphash.Seed
	matched   []bool // build rows matched so far (Outer only)
	keepLead  bool
	batchRows int
	fn        func(arrow.Record) error
}

// NewStreamJoin prepares the join j of records of the schemas left and
// right, given the build side's rows whole in build (the right record for a
// lead side of 0, else the left), whose keys it hashes now. It retains build
// until Release. Results go to fn as in HashJoinBatches, in records of at
// most batchRows rows (DefaultBatchRows when 0), allocated from mem
// (memory.DefaultAllocator when nil).
func NewStreamJoin(mem memory.Allocator, left, right *arrow.Schema, build arrow.Record, j JoinSpec, batchRows int, fn func(arrow.Record) error) (*StreamJoin, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	lay, err := newLayout(left, right, j)
	if err != nil {
		return nil, err
	}
	lead := LeadSide(lay.spec.How)
	if want := [2]*arrow.Schema{left, right}[1-lead]; !build.Schema().Equal(want) {
		return nil, fmt.Errorf("%w: the %s side's record has schema %s, want %s", ErrSpec, sideName(1-lead), build.Schema(), want)
	}
	if build.NumRows() >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d %s rows (at most %d)", ErrTooLarge, build.NumRows(), sideName(1-lead), math.MaxInt32-1)
	}
	s := &StreamJoin{mem: mem, lay: lay, lead: lead, leadSch: [2]*arrow.Schema{left, right}[lead], build: build, seed: maphash.MakeSeed(),
		keepLead: lay.spec.How != Inner, batchRows: batchRows, fn: fn}
	build.Retain()
	cast, ks, err := sideKeys(mem, lay, 1-lead, build, s.seed)
	s.buildKeys = cast
	if err != nil {
		s.Release()
		return nil, err
	}
	s.table = buildTable(ks)
	if lay.spec.How == Outer {
		s.matched = make([]bool, ks.n)
	}
	return s, nil
}

// Add joins the next record of the lead side and hands its results to fn.
// An error (bad keys, or fn's) leaves the join unusable but for Release.
func (s *StreamJoin) Add(rec arrow.Record) error {
	if !rec.Schema().Equal(s.leadSch) {
		return fmt.Errorf("%w: a %s record has schema %s, want %s", ErrSpec, sideName(s.lead), rec.Schema(), s.leadSch)
	}
	if rec.NumRows() >= math.MaxInt32 {
		return fmt.Errorf("%w: a %s record of %d rows (at most %d)", ErrTooLarge, sideName(s.lead), rec.NumRows(), math.MaxInt32-1)
	}
	cast, ks, err := sideKeys(s.mem, s.lay, s.lead, rec, s.seed)
	defer releaseAll(cast)
	if err != nil {
		return err
	}
	s.leadRows += rec.NumRows()
	cur := probeCursor{a: ks, t: s.table, keepA: s.keepLead, matched: s.matched}
	var p pairs
	for cur.fill(&p, s.batchRows) {
		if err := s.emit(rec, cast, p); err != nil {
			return err
		}
	}
	return nil
}

// Finish emits what the join owes once every lead record was added: for
// Outer, the build rows that matched nothing, in build order.
func (s *StreamJoin) Finish() error {
	if s.matched == nil {
		return nil
	}
	var p pairs
	addUnmatchedB(&p, s.matched)
	if len(p.a) == 0 {
		return nil
	}
	b := array.NewRecordBuilder(s.mem, s.leadSch)
	defer b.Release()
	empty := b.NewRecord() // no lead rows: a placeholder of their types
	defer empty.Release()
	cast, _, err := sideKeys(s.mem, s.lay, s.lead, empty, s.seed)
	defer releaseAll(cast)
	if err != nil {
		return err
	}
	return s.emit(empty, cast, p)
}

// LeadRows is the number of lead rows added so far.
func (s *StreamJoin) LeadRows() int64 { return s.leadRows }

// Release frees the build side's keys and table and releases build.
func (s *StreamJoin) Release() {
	releaseAll(s.buildKeys)
	s.buildKeys, s.table, s.matched = nil, nil, nil
	if s.build != nil {
		s.build.Release()
		s.build = nil
	}
}

// emit hands the rows of p (lead rows of rec, whose cast keys are cast, and
// build rows) to fn in batches.
func (s *StreamJoin) emit(rec arrow.Record, cast []arrow.Array, p pairs) error {
	return s.view(rec, cast, p).emit(s.batchRows, s.fn)
}

// view is the join of the lead record rec with the build side through the
// pairs p (lead row, build row), oriented as (left, right) for batch.
func (s *StreamJoin) view(rec arrow.Record, cast []arrow.Array, p pairs) *join {
	jn := &join{mem: s.mem, lay: s.lay}
	jn.recs[s.lead], jn.keys[s.lead] = rec, cast
	jn.recs[1-s.lead], jn.keys[1-s.lead] = s.build, s.buildKeys
	if s.lead == 0 {
		jn.p = p
	} else {
		jn.p = pairs{a: p.b, b: p.a}
	}
	return jn
}
