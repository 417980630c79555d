package table

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRowSumsOrderIndependent: the sums of a record equal those of its rows
// added one by one in reverse order, and of its halves in either order.
func TestRowSumsOrderIndependent(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(43, 1))
	rec := randomRecord(mem, allSchema(), 2*hashBlock+77, rng, 0.1)
	defer rec.Release()
	pids := make([]uint32, rec.NumRows())
	for i := range pids {
		pids[i] = uint32(rng.IntN(7))
	}
	var whole, reversed, halves RowSums
	mustAdd(t, &whole, rec, pids)
	for i := rec.NumRows() - 1; i >= 0; i-- {
		addSlice(t, &reversed, rec, pids, i, i+1)
	}
	mid := rec.NumRows() / 3
	addSlice(t, &halves, rec, pids, mid, rec.NumRows())
	addSlice(t, &halves, rec, pids, 0, mid)
	for _, got := range []RowSums{reversed, halves} {
		if !slices.Equal(got.Sums, whole.Sums) || !slices.Equal(got.Rows, whole.Rows) {
			t.Fatalf("sums depend on row order: %v %v, want %v %v", got.Rows, got.Sums, whole.Rows, whole.Sums)
		}
	}
}

// TestRowSumsSeeChanges: changing one value, or moving one row to another
// partition, changes the sums.
func TestRowSumsSeeChanges(t *testing.T) {
	mem := checkedMem(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	a := int64Strings(mem, schema, []int64{1, 2, 3}, []string{"x", "y", "z"})
	b := int64Strings(mem, schema, []int64{1, 2, 4}, []string{"x", "y", "z"})
	c := int64Strings(mem, schema, []int64{1, 2, 3}, []string{"x", "z", "y"}) // swapped across columns: other rows
	defer a.Release()
	defer b.Release()
	defer c.Release()
	pids := []uint32{0, 0, 1}
	var sa, sb, sc, moved RowSums
	mustAdd(t, &sa, a, pids)
	mustAdd(t, &sb, b, pids)
	mustAdd(t, &sc, c, pids)
	mustAdd(t, &moved, a, []uint32{0, 1, 1})
	if sa.Sums[1] == sb.Sums[1] || sa.Sums[0] != sb.Sums[0] {
		t.Errorf("a changed value: sums %v and %v", sa.Sums, sb.Sums)
	}
	if slices.Equal(sa.Sums, sc.Sums) {
		t.Errorf("rows with swapped values: equal sums %v", sa.Sums)
	}
	if _, s := moved.Of(0); s == sa.Sums[0] {
		t.Errorf("a row that moved partition: partition 0's sum unchanged")
	}
	if r, s := sa.Of(9); r != 0 || s != 0 {
		t.Errorf("a partition no row went to: %d rows, sum %x", r, s)
	}
}

// TestRowSumsIgnoreValuesUnderNulls: what a null slot's value buffer holds
// does not change the sums.
func TestRowSumsIgnoreValuesUnderNulls(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	valid := []byte{0b101}
	sums := make([]uint64, 2)
	for i, under := range []int64{0, 12345} {
		vals := arrow.Int64Traits.CastToBytes([]int64{7, under, 9})
		data := array.NewData(arrow.PrimitiveTypes.Int64, 3, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(vals)}, nil, 1, 0)
		arr := array.NewInt64Data(data)
		rec := array.NewRecord(schema, []arrow.Array{arr}, 3)
		var s RowSums
		mustAdd(t, &s, rec, []uint32{0, 0, 0})
		sums[i] = s.Sums[0]
		rec.Release()
		arr.Release()
		data.Release()
	}
	if sums[0] != sums[1] {
		t.Errorf("the value under a null changed the sum: %x and %x", sums[0], sums[1])
	}
}

// TestSparseRowSumsMatchDense: the sparse sums of a record over many
// partitions, added in two slices, equal the dense sums of the whole
// record, partition by partition, and Each visits exactly the partitions
// that got rows, in ascending order.
func TestSparseRowSumsMatchDense(t *testing.T) {
	for _, c := range []struct{ rows, parts, dense int }{
		{hashBlock + 300, 100_000, 0},
		{9000, 50, 0},     // compacts
		{9000, 50, 50},    // an entry per partition
		{9000, 50, 20},    // partitions 20-49 kept sparse beside the dense ones
		{300, 4000, 4000}, // too few rows for an entry per partition: sparse
		{hashBlock + 300, 100_000, 100_000},
	} {
		checkSparseSums(t, c.rows, c.parts, c.dense)
	}
}

// TestSparseRowSumsDenseOnlyForManyRows: Dense's entries are made only
// when the first record has a row for every 32 partitions or more.
func TestSparseRowSumsDenseOnlyForManyRows(t *testing.T) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(5, 9))
	for _, c := range []struct {
		rows  int
		dense bool
	}{{31, false}, {32, true}} {
		rec := randomRecord(mem, allSchema(), c.rows, rng, 0)
		var s SparseRowSums
		s.Dense(1000)
		if err := s.Add(rec, make([]uint32, c.rows)); err != nil {
			t.Fatal(err)
		}
		if got := s.dense != nil; got != c.dense {
			t.Errorf("%d rows over 1,000 partitions: an entry per partition %v, want %v", c.rows, got, c.dense)
		}
		rec.Release()
	}
}

func checkSparseSums(t *testing.T, n, parts, nDense int) {
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(5, 8))
	rec := randomRecord(mem, allSchema(), n, rng, 0.1)
	defer rec.Release()
	pids := make([]uint32, rec.NumRows())
	for i := range pids {
		pids[i] = uint32(rng.IntN(parts))
	}
	var sparse SparseRowSums
	sparse.Dense(nDense)
	var dense RowSums
	mustAdd(t, &dense, rec, pids)
	for _, r := range [][2]int64{{200, rec.NumRows()}, {0, 200}} {
		sl := rec.NewSlice(r[0], r[1])
		if err := sparse.Add(sl, pids[r[0]:r[1]]); err != nil {
			t.Fatal(err)
		}
		sl.Release()
	}
	d := sparse.dense
	var seen []uint32
	sparse.Each(func(p uint32, rows, sum uint64) {
		seen = append(seen, p)
		if r, s := dense.Of(int(p)); r != rows || s != sum {
			t.Errorf("partition %d: sparse %d rows sum %x, dense %d rows sum %x", p, rows, sum, r, s)
		}
	})
	var want []uint32
	for p, rows := range dense.Rows {
		if rows > 0 {
			want = append(want, uint32(p))
		}
	}
	if !slices.Equal(seen, want) {
		t.Errorf("%d rows over %d partitions: Each visited %d partitions, want the %d that got rows in order", n, parts, len(seen), len(want))
	}
	if d != nil && (slices.ContainsFunc(d.rows, func(n uint32) bool { return n != 0 }) || slices.ContainsFunc(d.sums, func(n uint64) bool { return n != 0 })) {
		t.Error("the entries per partition went back to their pool not cleared")
	}
	if r, s := sparse.Of(uint32(parts)); r != 0 || s != 0 {
		t.Errorf("a partition no row went to: %d rows", r)
	}
	if r, s := sparse.Of(want[0]); r != dense.Rows[want[0]] || s != dense.Sums[want[0]] {
		t.Errorf("Of(%d) = %d rows, want %d", want[0], r, dense.Rows[want[0]])
	}
}

func TestRowSumsRefusesMismatchedIDs(t *testing.T) {
	mem := checkedMem(t)
	rec := randomRecord(mem, allSchema(), 5, rand.New(rand.NewPCG(1, 2)), 0)
	defer rec.Release()
	var s RowSums
	if err := s.Add(rec, make([]uint32, 4)); err == nil {
		t.Fatal("4 partition ids for 5 rows: no error")
	}
}

func mustAdd(t *testing.T, s *RowSums, rec arrow.Record, pids []uint32) {
	t.Helper()
	if err := s.Add(rec, pids); err != nil {
		t.Fatal(err)
	}
}

func addSlice(t *testing.T, s *RowSums, rec arrow.Record, pids []uint32, lo, hi int64) {
	t.Helper()
	sl := rec.NewSlice(lo, hi)
	defer sl.Release()
	mustAdd(t, s, sl, pids[lo:hi])
}

func int64Strings(mem memory.Allocator, schema *arrow.Schema, ks []int64, ss []string) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(ks, nil)
	b.Field(1).(*array.StringBuilder).AppendValues(ss, nil)
	return b.NewRecord()
}

// BenchmarkRowSums is the sender's cost of the replay check: the row sums
// of the bench record (4 columns, 44 bytes a row) into 1000 partitions.
func BenchmarkRowSums(b *testing.B) {
	rec := benchRecord(b)
	defer rec.Release()
	part, _ := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: []string{"key"}}, 1000)
	pids, _ := part.Partition(rec, nil)
	var s RowSums
	b.SetBytes(rec.NumRows() * GenRowBytes(GenConfig{PayloadBytes: 16}))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Add(rec, pids); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, rec.NumRows())
}
