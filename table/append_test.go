package table

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/offheap"
)

// randomAppendSchema draws 1..5 columns of allTypes.
func randomAppendSchema(rng *rand.Rand) *arrow.Schema {
	var fs []arrow.Field
	for i := range 1 + rng.IntN(5) {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: allTypes[rng.IntN(len(allTypes))], Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// randomAppendRecords draws records of schema: some without nulls (no
// bitmap), some with, some sliced.
func randomAppendRecords(mem memory.Allocator, schema *arrow.Schema, rng *rand.Rand) []arrow.Record {
	var recs []arrow.Record
	for range 1 + rng.IntN(4) {
		rec := randomRecord(mem, schema, rng.IntN(60), rng, []float64{0, 0, 0.2, 0.9}[rng.IntN(4)])
		if rec.NumRows() > 2 && rng.IntN(2) == 0 {
			s := rec.NewSlice(1+rng.Int64N(rec.NumRows()-2), rec.NumRows())
			rec.Release()
			rec = s
		}
		recs = append(recs, rec)
	}
	return recs
}

// appendSnapshot is a Record taken from an Appender and the ranges it
// covers.
type appendSnapshot struct {
	rec    arrow.Record
	ranges []RowRange
}

// TestAppenderMatchesConcatRanges appends random ranges of random records
// in several steps; after each step Record must equal ConcatRanges of the
// ranges so far, and every earlier Record must still equal what it covered.
func TestAppenderMatchesConcatRanges(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 60 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			schema := randomAppendSchema(rng)
			recs := randomAppendRecords(mem, schema, rng)
			defer releaseAll(recs)
			var alloc Alloc // odd trials: buffers outside the Go heap
			arena := offheap.New()
			defer runtime.KeepAlive(arena)
			if trial%2 == 1 {
				alloc = arena.Alloc
			}
			app, err := NewAppenderAlloc(schema, alloc)
			if err != nil {
				t.Fatal(err)
			}
			var ranges []RowRange
			var snaps []appendSnapshot
			defer func() {
				for _, s := range snaps {
					s.rec.Release()
				}
			}()
			for range 1 + rng.IntN(6) {
				for range rng.IntN(5) {
					r := randomRowRange(recs, rng)
					if alloc != nil && app.Rows() == 0 && r.Rows > 0 {
						app.Presize(int64(rng.IntN(200)), r.Cols, r.Off, r.Rows) // from the arena
					}
					app.Append(r.Cols, r.Off, r.Rows)
					ranges = append(ranges, r)
				}
				snap := appendSnapshot{app.Record(), ranges[:len(ranges):len(ranges)]}
				snaps = append(snaps, snap)
				for _, s := range snaps {
					checkAppended(t, mem, schema, s)
				}
			}
			last := snaps[len(snaps)-1].rec
			if app.Bytes() < app.UsedBytes() || app.Rows() != last.NumRows() || app.UsedBytes() != RecordBytes(last) {
				t.Fatalf("Rows %d, Bytes %d, UsedBytes %d; the record has %d rows of %d bytes",
					app.Rows(), app.Bytes(), app.UsedBytes(), last.NumRows(), RecordBytes(last))
			}
		})
	}
}

// randomRowRange draws a range, possibly empty, of one of recs.
func randomRowRange(recs []arrow.Record, rng *rand.Rand) RowRange {
	rec := recs[rng.IntN(len(recs))]
	off := rng.Int64N(rec.NumRows() + 1)
	n := rng.Int64N(rec.NumRows() - off + 1)
	return RowRange{Rec: rec, Off: off, Rows: n, Cols: ViewOf(rec)}
}

// checkAppended fails t unless s.rec equals ConcatRanges of s.ranges, null
// counts included.
func checkAppended(t *testing.T, mem memory.Allocator, schema *arrow.Schema, s appendSnapshot) {
	t.Helper()
	want, err := ConcatRanges(mem, schema, s.ranges)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	if err := sameRecord(s.rec, want); err != nil {
		t.Fatalf("Appender differs from ConcatRanges: %v\n got %v\nwant %v", err, s.rec, want)
	}
}

// sameRecord compares got and want cell by cell (NaN equals NaN; not
// RecordApproxEqual, which finds float16 infinities unequal), with their
// null counts.
func sameRecord(got, want arrow.Record) error {
	if got.NumRows() != want.NumRows() || got.NumCols() != want.NumCols() {
		return fmt.Errorf("%dx%d, want %dx%d", got.NumRows(), got.NumCols(), want.NumRows(), want.NumCols())
	}
	for c := range int(want.NumCols()) {
		g, w := got.Column(c), want.Column(c)
		if g.NullN() != w.NullN() {
			return fmt.Errorf("column %d: %d nulls, want %d", c, g.NullN(), w.NullN())
		}
		for i := range g.Len() {
			if x, y := cell(g, i), cell(w, i); x != y {
				return fmt.Errorf("column %d row %d: %s, want %s", c, i, x, y)
			}
		}
	}
	return nil
}

// TestAppenderRecordWhileAppending reads a Record on another goroutine
// while appends go on (run with -race): bitmaps whose last byte the Record
// covers in part must not be written under it.
func TestAppenderRecordWhileAppending(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(9, 10))
	rec := randomRecord(memory.DefaultAllocator, schema, 100, rng, 0.3)
	defer rec.Release()
	cols := ViewOf(rec)
	app, _ := NewAppender(schema)
	var ranges []RowRange
	add := func(off, rows int64) {
		app.Append(cols, off, rows)
		ranges = append(ranges, RowRange{Rec: rec, Off: off, Rows: rows, Cols: cols})
	}
	for step := range 20 {
		add(int64(step), 3)
		snap := app.Record()
		want, err := ConcatRanges(nil, schema, ranges)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan bool)
		go func() {
			done <- sameRecord(snap, want) == nil
		}()
		for range 4 {
			add(int64(rng.IntN(90)), int64(rng.IntN(10)))
		}
		if !<-done {
			t.Fatalf("step %d: record changed", step)
		}
		want.Release()
		snap.Release()
	}
}

// TestAppenderFits checks that Fits refuses a range whose values overflow a
// string column's 32-bit offsets, that Append panics on it, and that
// large_string never overflows.
func TestAppenderFits(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String},
		{Name: "l", Type: arrow.BinaryTypes.LargeString},
	}, nil)
	app, _ := NewAppender(schema)
	first := []ColumnView{{Offs32: []int32{0, 5}, Data: []byte("hello")}, {Offs64: []int64{0, 1}, Data: []byte("x")}}
	app.Append(first, 0, 1)
	huge := func(n int32) []ColumnView {
		return []ColumnView{{Offs32: []int32{7, 7 + n}}, {Offs64: []int64{0, math.MaxInt64 / 2}}}
	}
	cases := []struct {
		name string
		n    int32
		want bool
	}{
		{"fills", math.MaxInt32 - 5, true},
		{"overflows", math.MaxInt32 - 4, false},
	}
	for _, c := range cases {
		if got := app.Fits(huge(c.n), 0, 1); got != c.want {
			t.Errorf("%s: Fits = %v, want %v", c.name, got, c.want)
		}
	}
	if !app.Fits(huge(math.MaxInt32-7), 1, 0) {
		t.Error("an empty range does not fit")
	}
	defer func() {
		if recover() == nil {
			t.Error("Append of an overflowing range did not panic")
		}
		if app.Rows() != 1 {
			t.Errorf("Rows = %d after a refused Append", app.Rows())
		}
	}()
	app.Append(huge(math.MaxInt32-4), 0, 1)
}

func TestNewAppenderRefusesUnsupported(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}}, nil)
	if _, err := NewAppender(schema); !errors.Is(err, ErrUnsupportedType) {
		t.Fatalf("err = %v, want ErrUnsupportedType", err)
	}
}

// BenchmarkAppender appends 1000 records of 1000 rows, in pieces of 4 rows,
// to 250 appenders round-robin, as a receiver of a 1000 -> 250 shuffle
// appends each decoded entry's pieces to their output partitions.
func BenchmarkAppender(b *testing.B) {
	recs := make([]arrow.Record, 1000)
	views := make([][]ColumnView, len(recs))
	for i := range recs {
		recs[i] = GenTask(memory.DefaultAllocator, GenConfig{Rows: 1000 * 1000, PayloadBytes: 100}, i, 1000)
		views[i] = ViewOf(recs[i])
	}
	defer releaseAll(recs)
	schema := recs[0].Schema()
	b.ReportAllocs()
	b.SetBytes(1000 * 1000 * 128)
	for range b.N {
		apps := make([]*Appender, 250)
		for p := range apps {
			apps[p], _ = NewAppender(schema)
		}
		for _, cols := range views {
			for p, app := range apps {
				app.Append(cols, int64(p*4), 4)
			}
		}
		for _, app := range apps {
			app.Record().Release()
		}
	}
}

// TestAppenderPresize: after Presize for the rows to come, appending them
// moves no buffer (capacity is unchanged), and the result is the same.
func TestAppenderPresize(t *testing.T) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 4000, PayloadBytes: 20}, 0, 1)
	defer rec.Release()
	cols := ViewOf(rec)
	a, err := NewAppender(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	a.Presize(rec.NumRows(), cols, 0, 100)
	before := a.Bytes()
	for off := int64(0); off < rec.NumRows(); off += 4 {
		a.Append(cols, off, 4)
	}
	if a.Bytes() != before {
		t.Fatalf("capacity moved from %d to %d bytes", before, a.Bytes())
	}
	got := a.Record()
	defer got.Release()
	if !array.RecordEqual(got, rec) {
		t.Fatal("presized appender's rows differ from the input")
	}
}

func TestAppenderRoom(t *testing.T) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 200, PayloadBytes: 20}, 0, 1)
	defer rec.Release()
	cols := ViewOf(rec)
	a, err := NewAppender(rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if a.Room(1) {
		t.Fatal("an appender never presized has room")
	}
	a.Presize(100, cols, 0, 100)
	a.Append(cols, 0, 60)
	if !a.Room(40) || a.Room(41) {
		t.Fatalf("presized for 100 rows, holding 60: Room(40) = %v, Room(41) = %v; want true, false", a.Room(40), a.Room(41))
	}
	b, fresh := a.Empty(nil), must(NewAppender(rec.Schema()))
	if b.Rows() != 0 || b.Room(1) || b.Bytes() != fresh.Bytes() {
		t.Fatalf("Empty: %d rows, %d bytes, Room(1) = %v; want an empty appender without capacity", b.Rows(), b.Bytes(), b.Room(1))
	}
	b.Presize(140, cols, 60, 140)
	b.Append(cols, 60, 140)
	got := b.Record()
	defer got.Release()
	if want := rec.NewSlice(60, 200); !array.RecordEqual(got, want) {
		want.Release()
		t.Fatal("the appender from Empty holds other rows than appended")
	} else {
		want.Release()
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestAppenderViews: the views of an appender's rows are those of the
// record it returns, for columns of every type with and without nulls,
// after each of several appends, and those taken earlier stay unchanged
// while appends go on.
func TestAppenderViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		schema := allSchema()
		recs := randomAppendRecords(memory.DefaultAllocator, schema, rng)
		app := must(NewAppender(schema))
		var earlier, copies [][]ColumnView
		for range 6 {
			views, rows := app.Views()
			rec := app.Record()
			if rows != rec.NumRows() || !reflect.DeepEqual(views, ViewOf(rec)) {
				t.Fatalf("views of %d rows differ from the record's", rows)
			}
			rec.Release()
			earlier, copies = append(earlier, views), append(copies, cloneViews(views))
			r := randomRowRange(recs, rng)
			app.Append(ViewOf(r.Rec), r.Off, r.Rows)
		}
		for i := range earlier {
			if !reflect.DeepEqual(earlier[i], copies[i]) {
				t.Fatalf("views taken after %d appends changed as appends went on", i)
			}
		}
		releaseAll(recs)
	}
}

// cloneViews copies the bytes of views.
func cloneViews(views []ColumnView) []ColumnView {
	out := make([]ColumnView, len(views))
	for i, v := range views {
		out[i] = ColumnView{Valid: slices.Clone(v.Valid), ValidOff: v.ValidOff, Fixed: slices.Clone(v.Fixed), Bits: slices.Clone(v.Bits),
			BitOff: v.BitOff, Offs32: slices.Clone(v.Offs32), Offs64: slices.Clone(v.Offs64), Data: slices.Clone(v.Data)}
	}
	return out
}
