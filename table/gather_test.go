package table

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestConcatRangesMatchesSliceConcat checks ConcatRanges against the naive
// reference (Slice each range, then Concat) on random records of every
// supported type, with nulls, sliced inputs and empty ranges.
func TestConcatRangesMatchesSliceConcat(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 40 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			schema := randomGatherSchema(rng)
			var recs []arrow.Record
			for range 1 + rng.IntN(4) {
				rec := randomRecord(mem, schema, rng.IntN(50), rng, 0.2)
				if rec.NumRows() > 2 && rng.IntN(2) == 0 { // a sliced input
					s := rec.NewSlice(1, rec.NumRows()-1)
					rec.Release()
					rec = s
				}
				recs = append(recs, rec)
			}
			defer releaseAll(recs)
			var ranges []RowRange
			var slices []arrow.Record
			for range rng.IntN(8) {
				rec := recs[rng.IntN(len(recs))]
				off := rng.Int64N(rec.NumRows() + 1)
				n := rng.Int64N(rec.NumRows() - off + 1)
				r := RowRange{Rec: rec, Off: off, Rows: n}
				if rng.IntN(2) == 0 { // views alone, as Appender.Views gives them
					r = RowRange{Cols: ViewOf(rec), Len: rec.NumRows(), Off: off, Rows: n}
				}
				ranges = append(ranges, r)
				slices = append(slices, rec.NewSlice(off, off+n))
			}
			defer releaseAll(slices)
			got, err := ConcatRanges(mem, schema, ranges)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if len(slices) == 0 {
				if got.NumRows() != 0 {
					t.Fatalf("no ranges gave %d rows", got.NumRows())
				}
				return
			}
			want, err := Concat(mem, slices)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			if !array.RecordApproxEqual(got, want, array.WithNaNsEqual(true)) {
				t.Fatalf("ConcatRanges differs from Slice+Concat:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// TestGatherRunsMatchesSliceConcat gathers hundreds of runs, most of one
// or two rows, from a few records of every gathered type (values of one
// row are copied as words, short strings as 16-byte words), and checks
// GatherRuns and ConcatRanges of the same runs against Slice+Concat.
func TestGatherRunsMatchesSliceConcat(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := range 30 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			schema := randomGatherSchema(rng)
			recs := make([]arrow.Record, 1+rng.IntN(5))
			srcs := make([]Source, len(recs))
			for i := range recs {
				recs[i] = randomRecord(mem, schema, 1+rng.IntN(40), rng, []float64{0, 0.3}[rng.IntN(2)])
				srcs[i] = Source{Cols: ViewOf(recs[i]), Rows: recs[i].NumRows()}
			}
			defer releaseAll(recs)
			var runs []SourceRun
			var ranges []RowRange
			var slices []arrow.Record
			for range 1 + rng.IntN(300) {
				i := rng.IntN(len(recs))
				n := min(int64(1+rng.IntN(2)*rng.IntN(4)), recs[i].NumRows())
				off := rng.Int64N(recs[i].NumRows() - n + 1)
				runs = append(runs, SourceRun{Src: int32(i), Off: off, Rows: n})
				ranges = append(ranges, RowRange{Cols: srcs[i].Cols, Len: srcs[i].Rows, Off: off, Rows: n})
				slices = append(slices, recs[i].NewSlice(off, off+n))
			}
			defer releaseAll(slices)
			want, err := Concat(mem, slices)
			if err != nil {
				t.Fatal(err)
			}
			defer want.Release()
			got, err := GatherRuns(mem, schema, srcs, runs)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			if err := sameRecord(got, want); err != nil {
				t.Fatalf("GatherRuns differs from Slice+Concat: %v", err)
			}
			viaRanges, err := ConcatRanges(mem, schema, ranges)
			if err != nil {
				t.Fatal(err)
			}
			defer viaRanges.Release()
			if err := sameRecord(viaRanges, want); err != nil {
				t.Fatalf("ConcatRanges differs from Slice+Concat: %v", err)
			}
		})
	}
}

func TestGatherRunsRefusesBadRuns(t *testing.T) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 10, PayloadBytes: 3}, 0, 1)
	defer rec.Release()
	srcs := []Source{{Cols: ViewOf(rec), Rows: 10}}
	for _, r := range []SourceRun{{Off: 5, Rows: 6}, {Off: -1, Rows: 1}, {Src: 1, Rows: 1}, {Src: -1, Rows: 1}, {Off: 2, Rows: -1}} {
		if _, err := GatherRuns(nil, rec.Schema(), srcs, []SourceRun{r}); err == nil {
			t.Errorf("run %+v of a 10-row source accepted", r)
		}
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := GatherRuns(nil, other, srcs, []SourceRun{{Rows: 1}}); err == nil {
		t.Error("views of another column count accepted")
	}
}

func TestConcatRangesRefusesBadRanges(t *testing.T) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 10, PayloadBytes: 3}, 0, 1)
	defer rec.Release()
	views := ViewOf(rec)
	for _, r := range []RowRange{{Rec: rec, Off: 5, Rows: 6}, {Rec: rec, Off: -1, Rows: 1}, {Cols: views, Len: 10, Off: 5, Rows: 6}, {Cols: views, Len: 4, Rows: 5}} {
		if _, err := ConcatRanges(nil, rec.Schema(), []RowRange{r}); err == nil {
			t.Errorf("range %d+%d of 10 rows accepted", r.Off, r.Rows)
		}
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "key", Type: arrow.PrimitiveTypes.Int32}}, nil)
	if _, err := ConcatRanges(nil, other, []RowRange{{Rec: rec, Rows: 1}}); err == nil {
		t.Error("a record of another schema accepted")
	}
	if _, err := ConcatRanges(nil, other, []RowRange{{Cols: views, Len: 10, Rows: 1}}); err == nil {
		t.Error("views of another column count accepted")
	}
}

func randomGatherSchema(rng *rand.Rand) *arrow.Schema {
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Uint16,
		arrow.PrimitiveTypes.Float32, arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String,
		arrow.BinaryTypes.LargeBinary, arrow.FixedWidthTypes.Date32}
	var fs []arrow.Field
	for i := range 1 + rng.IntN(4) {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: types[rng.IntN(len(types))], Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

func BenchmarkConcatRanges(b *testing.B) {
	// 1000 pieces of 4 rows: the shape of one output partition of the demo.
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 4000, PayloadBytes: 100}, 0, 1)
	defer rec.Release()
	ranges := make([]RowRange, 1000)
	slices := make([]arrow.Record, 1000)
	for i := range ranges {
		ranges[i] = RowRange{Rec: rec, Off: int64(i * 4), Rows: 4}
		slices[i] = rec.NewSlice(int64(i*4), int64(i*4+4))
	}
	defer releaseAll(slices)
	b.Run("ConcatRanges", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(4000 * 128)
		for range b.N {
			r, _ := ConcatRanges(nil, rec.Schema(), ranges)
			r.Release()
		}
	})
	b.Run("SliceConcat", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(4000 * 128)
		for range b.N {
			r, _ := Concat(nil, slices)
			r.Release()
		}
	})
}

// BenchmarkConcatRangesScattered gathers 1000 4-row pieces from 1000
// distinct records, as an output partition of a 1000 -> 1000 shuffle is read:
// every piece comes from another decoded entry. "views" shares column views
// resolved once per record (what the receiver does), "resolve" leaves them
// to ConcatRanges.
func BenchmarkConcatRangesScattered(b *testing.B) {
	recs := make([]arrow.Record, 1000)
	recs[0] = GenTask(memory.DefaultAllocator, GenConfig{Rows: 1000 * 1000, PayloadBytes: 100}, 0, 1000)
	for i := 1; i < len(recs); i++ {
		r := GenTask(memory.DefaultAllocator, GenConfig{Rows: 1000 * 1000, PayloadBytes: 100}, i, 1000)
		// Decoded entries of one shuffle share the codec's schema.
		recs[i] = array.NewRecord(recs[0].Schema(), r.Columns(), r.NumRows())
		r.Release()
	}
	defer releaseAll(recs)
	for _, shared := range []bool{true, false} {
		name := "resolve"
		if shared {
			name = "views"
		}
		ranges := make([]RowRange, len(recs))
		for i, r := range recs {
			ranges[i] = RowRange{Rec: r, Off: int64(i % 250 * 4), Rows: 4}
			if shared {
				ranges[i].Cols = ViewOf(r)
			}
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(4000 * 128)
			for range b.N {
				r, _ := ConcatRanges(nil, recs[0].Schema(), ranges)
				r.Release()
			}
		})
	}
}

// BenchmarkConcatRangesRows gathers one-row ranges from 256 records of 512
// rows in a scattered order: a receiver's block of tiny runs (a row or two
// of each of thousands of partitions per entry), gathered in partition
// order, and a read of partitions whose rows came a row per task.
func BenchmarkConcatRangesRows(b *testing.B) {
	const nrec, per = 256, 512
	recs := make([]arrow.Record, nrec)
	recs[0] = GenTask(memory.DefaultAllocator, GenConfig{Rows: nrec * per, PayloadBytes: 12}, 0, nrec)
	for i := 1; i < nrec; i++ {
		r := GenTask(memory.DefaultAllocator, GenConfig{Rows: nrec * per, PayloadBytes: 12}, i, nrec)
		recs[i] = array.NewRecord(recs[0].Schema(), r.Columns(), r.NumRows())
		r.Release()
	}
	defer releaseAll(recs)
	views := make([][]ColumnView, nrec)
	for i, r := range recs {
		views[i] = ViewOf(r)
	}
	ranges := make([]RowRange, 0, nrec*per)
	srcs := make([]Source, nrec)
	for i := range srcs {
		srcs[i] = Source{Cols: views[i], Rows: per}
	}
	runs := make([]SourceRun, 0, nrec*per)
	for row := range per {
		for i := range nrec {
			// a stride through the records, as partition order visits entries
			j := (i*97 + row) % nrec
			ranges = append(ranges, RowRange{Cols: views[j], Len: per, Off: int64(row), Rows: 1})
			runs = append(runs, SourceRun{Src: int32(j), Off: int64(row), Rows: 1})
		}
	}
	b.Run("ranges", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(nrec * per * 40)
		for range b.N {
			r, err := ConcatRanges(nil, recs[0].Schema(), ranges)
			if err != nil {
				b.Fatal(err)
			}
			r.Release()
		}
	})
	b.Run("runs", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(nrec * per * 40)
		for range b.N {
			r, err := GatherRuns(nil, recs[0].Schema(), srcs, runs)
			if err != nil {
				b.Fatal(err)
			}
			r.Release()
		}
	})
}
