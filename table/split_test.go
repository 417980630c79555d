package table

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// refSplit is the brute-force Split: for each group, the input rows in
// (partition, input row) order.
func refSplit(pids []uint32, groupOf []int, ngroups int) [][]int {
	out := make([][]int, ngroups)
	for i, p := range pids {
		g := groupOf[p]
		out[g] = append(out[g], i)
	}
	for _, rows := range out {
		slices.SortStableFunc(rows, func(a, b int) int { return int(pids[a]) - int(pids[b]) })
	}
	return out
}

// checkSplit runs Split and compares it with refSplit row by row.
func checkSplit(t *testing.T, mem memory.Allocator, rec arrow.Record, pids []uint32, groupOf []int, ngroups int) {
	t.Helper()
	groups, err := Split(mem, rec, pids, groupOf, ngroups)
	if err != nil {
		t.Fatal(err)
	}
	defer ReleaseGroups(groups)
	want := refSplit(pids, groupOf, ngroups)
	if len(groups) != ngroups {
		t.Fatalf("%d groups, want %d", len(groups), ngroups)
	}
	for g, rows := range want {
		got := groups[g]
		if len(rows) == 0 {
			if got.Rec != nil || len(got.Runs) != 0 {
				t.Fatalf("group %d should be empty", g)
			}
			continue
		}
		if got.Rec.NumRows() != int64(len(rows)) {
			t.Fatalf("group %d has %d rows, want %d", g, got.Rec.NumRows(), len(rows))
		}
		for j, i := range rows {
			sameRows(t, rec, i, got.Rec, j)
		}
		checkRuns(t, got, rows, pids)
	}
}

// checkRuns checks that runs ascend, cover the group, and match the pids.
func checkRuns(t *testing.T, g Group, rows []int, pids []uint32) {
	t.Helper()
	var next int64
	for k, r := range g.Runs {
		if r.Offset != next || r.Rows <= 0 || k > 0 && r.Partition <= g.Runs[k-1].Partition {
			t.Fatalf("bad run %d: %+v (previous end %d)", k, r, next)
		}
		for j := r.Offset; j < r.Offset+r.Rows; j++ {
			if pids[rows[j]] != r.Partition {
				t.Fatalf("row %d of run %+v has partition %d", j, r, pids[rows[j]])
			}
		}
		next = r.Offset + r.Rows
	}
	if next != g.Rec.NumRows() {
		t.Fatalf("runs cover %d of %d rows", next, g.Rec.NumRows())
	}
}

func TestSplitMatchesBruteForce(t *testing.T) {
	mem := checkedMem(t)
	schema := allSchema()
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name           string
		rows, off, len int64
		parts, ngroups int
		nullFrac       float64
	}{
		{"one partition", 200, 0, 200, 1, 1, 0.2},
		{"many partitions few groups", 3000, 0, 3000, 100, 4, 0.1},
		{"sliced odd offset", 3000, 13, 2011, 50, 3, 0.3},
		{"sliced no nulls", 1000, 7, 500, 10, 5, 0},
		{"more groups than used", 300, 1, 290, 5, 9, 0.5},
		{"all null", 100, 3, 60, 4, 2, 1},
		{"empty slice", 100, 50, 0, 4, 2, 0.1},
		{"sparse: few rows, many partitions", 300, 0, 300, 10_000, 4, 0.1},
		{"sparse sliced", 400, 9, 250, 100_000, 5, 0.2},
		{"sparse, 40 rows over 1000 partitions", 40, 0, 40, 1000, 3, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full := randomRecord(mem, schema, int(c.rows), rng, c.nullFrac)
			defer full.Release()
			rec := full.NewSlice(c.off, c.off+c.len)
			defer rec.Release()
			pids := make([]uint32, c.len)
			for i := range pids {
				pids[i] = uint32(rng.IntN(c.parts))
			}
			groupOf := make([]int, c.parts)
			for p := range groupOf {
				groupOf[p] = rng.IntN(c.ngroups)
			}
			checkSplit(t, mem, rec, pids, groupOf, c.ngroups)
			checkSplit(t, garbageAlloc{mem}, rec, pids, groupOf, c.ngroups) // buffers not zeroed first
		})
	}
}

// garbageAlloc is an allocator whose AllocateDirty hands out bytes of
// 0xa5, as a recycled buffer's last user may have left it: Split must
// write every byte of such a buffer.
type garbageAlloc struct{ memory.Allocator }

func (g garbageAlloc) AllocateDirty(n int) []byte {
	b := g.Allocate(n)
	for i := range b {
		b[i] = 0xa5
	}
	return b
}

func TestSplitSlicedChildBuffers(t *testing.T) {
	// A record whose arrays were sliced one by one (different offsets per
	// column), as Arrow allows.
	mem := checkedMem(t)
	rng := rand.New(rand.NewPCG(7, 8))
	full := randomRecord(mem, allSchema(), 500, rng, 0.2)
	defer full.Release()
	cols := make([]arrow.Array, full.NumCols())
	for i, c := range full.Columns() {
		cols[i] = array.NewSlice(c, int64(i), int64(i)+300)
	}
	rec := array.NewRecord(full.Schema(), cols, 300)
	releaseArrays(cols)
	defer rec.Release()
	pids := make([]uint32, 300)
	for i := range pids {
		pids[i] = uint32(rng.IntN(7))
	}
	checkSplit(t, mem, rec, pids, []int{0, 1, 0, 1, 2, 2, 0}, 3)
}

func TestSplitErrors(t *testing.T) {
	mem := checkedMem(t)
	rec := GenTask(mem, GenConfig{Rows: 10, Seed: 1, PayloadBytes: 2}, 0, 1)
	defer rec.Release()
	pids := make([]uint32, 10)
	bad := append([]uint32(nil), pids...)
	bad[4] = 9
	list := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int8)}}, nil)
	lb := array.NewRecordBuilder(mem, list)
	defer lb.Release()
	lrec := lb.NewRecord()
	defer lrec.Release()
	cases := []struct {
		name    string
		rec     arrow.Record
		pids    []uint32
		groupOf []int
		ngroups int
		want    error
	}{
		{"short pids", rec, pids[:5], []int{0}, 1, ErrBadInput},
		{"pid out of range", rec, bad, []int{0, 0}, 1, ErrBadInput},
		{"group out of range", rec, pids, []int{1}, 1, ErrBadInput},
		{"negative group", rec, pids, []int{-1}, 1, ErrBadInput},
		{"nil record", nil, nil, nil, 0, ErrBadInput},
		{"sparse pid out of range", rec, bad, make([]int, 9), 1, ErrBadInput},
		{"sparse group out of range", rec, pids, append([]int{3}, make([]int, 99)...), 2, ErrBadInput},
		{"unsupported column", lrec, nil, []int{0}, 1, ErrUnsupportedType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Split(mem, c.rec, c.pids, c.groupOf, c.ngroups); !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
}

func TestSplitThenConcatRestoresPartitions(t *testing.T) {
	// Partition, split, and concatenate the shards of each partition: every
	// row lands exactly once in the partition its key maps to.
	mem := checkedMem(t)
	cfg := GenConfig{Rows: 4000, Seed: 9, KeyCardinality: 300, PayloadBytes: 5}
	part, err := NewPartitioner(GenSchema(), Rule{Kind: Hash, Columns: []string{"key"}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	byPart := make([][]arrow.Record, 16)
	for task := range 4 {
		rec := GenTask(mem, cfg, task, 4)
		pids, err := part.Partition(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		groups, err := Split(mem, rec, pids, []int{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}, 3)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			for _, r := range g.Runs {
				byPart[r.Partition] = append(byPart[r.Partition], Slice(g.Rec, r.Offset, r.Rows))
			}
		}
		ReleaseGroups(groups)
	}
	seen := make([]bool, cfg.Rows)
	for p, recs := range byPart {
		out, err := Concat(mem, recs)
		if err != nil {
			t.Fatal(err)
		}
		releaseRecords(recs)
		pids, _ := part.Partition(out, nil)
		ids := out.Column(1).(*array.Int64).Int64Values()
		for i, id := range ids {
			if pids[i] != uint32(p) || seen[id] {
				t.Fatalf("row id %d: partition %d in output %d, seen before %v", id, pids[i], p, seen[id])
			}
			seen[id] = true
		}
		out.Release()
	}
	if i := slices.Index(seen, false); i >= 0 {
		t.Fatalf("row id %d lost", i)
	}
}

// releaseRecords releases every record.
func releaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}
