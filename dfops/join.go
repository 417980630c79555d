package dfops

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// DefaultBatchRows is the most rows HashJoinBatches puts in one record when
// given 0.
const DefaultBatchRows = 64 << 10

// HashJoin joins left and right as j says (see the package documentation for
// the semantics and the row order) and returns the result as one record
// allocated from mem (memory.DefaultAllocator when nil), which the caller must
// Release.
func HashJoin(mem memory.Allocator, left, right arrow.Record, j JoinSpec) (arrow.Record, error) {
	jn, err := newJoin(mem, left, right, j)
	if err != nil {
		return nil, err
	}
	defer jn.release()
	return jn.batch(0, len(jn.p.a))
}

// HashJoinBatches is HashJoin that hands the result to fn in records of at
// most batchRows rows (DefaultBatchRows when 0), in order, so a large result
// never has to be in memory at once (only its row numbers are: 8 bytes per
// output row). fn must not keep a record past its call without Retain. An
// error from fn stops the join and is returned. An empty result makes no
// call.
func HashJoinBatches(mem memory.Allocator, left, right arrow.Record, j JoinSpec, batchRows int, fn func(arrow.Record) error) error {
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	jn, err := newJoin(mem, left, right, j)
	if err != nil {
		return err
	}
	defer jn.release()
	return jn.emit(batchRows, fn)
}

// emit hands the join's rows to fn in records of at most batchRows rows,
// in order, releasing each after the call.
func (jn *join) emit(batchRows int, fn func(arrow.Record) error) error {
	for start := 0; start < len(jn.p.a); start += batchRows {
		rec, err := jn.batch(start, min(start+batchRows, len(jn.p.a)))
		if err != nil {
			return err
		}
		err = fn(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// join is one join in progress: its inputs, cast keys and matched pairs
// (p.a are left rows, p.b right rows).
type join struct {
	mem  memory.Allocator
	lay  *layout
	recs [2]arrow.Record
	keys [2][]arrow.Array // key columns cast to their common types
	p    pairs
}

func newJoin(mem memory.Allocator, left, right arrow.Record, j JoinSpec) (*join, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	lay, err := newLayout(left.Schema(), right.Schema(), j)
	if err != nil {
		return nil, err
	}
	if left.NumRows() >= math.MaxInt32 || right.NumRows() >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d left and %d right rows (at most %d per side)", ErrTooLarge, left.NumRows(), right.NumRows(), math.MaxInt32-1)
	}
	jn := &join{mem: mem, lay: lay, recs: [2]arrow.Record{left, right}}
	if err := jn.prepare(); err != nil {
		jn.release()
		return nil, err
	}
	return jn, nil
}

// prepare casts the keys and matches the rows.
func (jn *join) prepare() error {
	seed := maphash.MakeSeed()
	var ks [2]*keys
	for side := range 2 {
		var err error
		if jn.keys[side], ks[side], err = sideKeys(jn.mem, jn.lay, side, jn.recs[side], seed); err != nil {
			return err
		}
	}
	jn.p = matchHow(ks[0], ks[1], jn.lay.spec.How)
	return nil
}

// sideKeys casts the key columns of rec, a record of side, to their common
// types and returns them (the caller releases them, also on an error) with
// their canonical form hashed with seed.
func sideKeys(mem memory.Allocator, lay *layout, side int, rec arrow.Record, seed maphash.Seed) ([]arrow.Array, *keys, error) {
	var cast []arrow.Array
	for k, col := range lay.keyCols[side] {
		c, err := castArray(mem, rec.Column(col), lay.keyTypes[k])
		if err != nil {
			return cast, nil, fmt.Errorf("%s key %q: %w", sideName(side), rec.ColumnName(col), err)
		}
		cast = append(cast, c)
	}
	ks, err := newKeys(cast, int(rec.NumRows()), seed)
	return cast, ks, err
}

func sideName(side int) string {
	return [2]string{"left", "right"}[side]
}

// matchHow returns the pairs (left, right) in the order How promises.
func matchHow(l, r *keys, how How) pairs {
	if how == Right {
		p := match(r, l, true, false)
		return pairs{a: p.b, b: p.a}
	}
	return match(l, r, how == Left || how == Outer, how == Outer)
}

func (jn *join) release() {
	releaseAll(jn.keys[0])
	releaseAll(jn.keys[1])
}

// batch builds output rows [start, end).
func (jn *join) batch(start, end int) (arrow.Record, error) {
	cols := make([]arrow.Array, 0, len(jn.lay.srcs))
	defer func() { releaseAll(cols) }()
	for _, src := range jn.lay.srcs {
		c, err := gather(jn.mem, jn.picker(src, start, end))
		if err != nil {
			return nil, fmt.Errorf("output column %q: %w", jn.lay.schema.Field(len(cols)).Name, err)
		}
		cols = append(cols, c)
	}
	return array.NewRecord(jn.lay.schema, cols, int64(end-start)), nil
}

// picker says where the values of one output column of rows [start, end)
// come from. A merged key comes from the left keys, or from the right keys
// for a right join; an outer join takes it from whichever side the row has.
func (jn *join) picker(src source, start, end int) picker {
	a, b := jn.p.a[start:end], jn.p.b[start:end]
	switch {
	case src.key < 0 && src.side == 0:
		return picker{srcs: [2]arrow.Array{jn.recs[0].Column(src.col)}, a: a}
	case src.key < 0:
		return picker{srcs: [2]arrow.Array{jn.recs[1].Column(src.col)}, a: b}
	case jn.lay.spec.How == Right:
		return picker{srcs: [2]arrow.Array{jn.keys[1][src.key]}, a: b}
	case jn.lay.spec.How == Outer:
		return picker{srcs: [2]arrow.Array{jn.keys[0][src.key], jn.keys[1][src.key]}, a: a, b: b}
	}
	return picker{srcs: [2]arrow.Array{jn.keys[0][src.key]}, a: a}
}
