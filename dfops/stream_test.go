package dfops

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestStreamJoinMatchesNestedLoop joins every case of joinCases with the
// lead side cut into records of random sizes (empty ones too) and compares
// the rows, in order, with the nested-loop reference.
func TestStreamJoinMatchesNestedLoop(t *testing.T) {
	sizes := [][2]int{{400, 150}, {150, 400}, {1, 300}, {0, 40}, {40, 0}}
	for ci, tc := range joinCases {
		for _, how := range []How{Inner, Left, Right, Outer} {
			for si, size := range sizes {
				t.Run(fmt.Sprintf("%s/%s/%dx%d", tc.name, how, size[0], size[1]), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(ci)+100, uint64(si)))
					checkStreamJoin(t, rng, tc, how, size[0], size[1])
				})
			}
		}
	}
}

func checkStreamJoin(t *testing.T, rng *rand.Rand, tc joinCase, how How, nl, nr int) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	left, right := buildRecord(t, mem, rng, nl, tc.left), buildRecord(t, mem, rng, nr, tc.right)
	defer left.Release()
	defer right.Release()
	spec := tc.spec
	spec.How = how
	lead := LeadSide(how)
	sides := [2]arrow.Record{left, right}
	var got [][]any
	batch := 1 + rng.IntN(60)
	sj, err := NewStreamJoin(mem, left.Schema(), right.Schema(), sides[1-lead], spec, batch, func(rec arrow.Record) error {
		if rec.NumRows() == 0 || rec.NumRows() > int64(batch) {
			t.Errorf("a batch of %d rows (at most %d)", rec.NumRows(), batch)
		}
		got = append(got, rowsOf(rec)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Release()
	for _, rec := range cutRecord(rng, sides[lead]) {
		err := sj.Add(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := sj.Finish(); err != nil {
		t.Fatal(err)
	}
	if sj.LeadRows() != sides[lead].NumRows() {
		t.Errorf("LeadRows %d, want %d", sj.LeadRows(), sides[lead].NumRows())
	}
	lk, rk, merged := refKeys(t, left.Schema(), right.Schema(), spec)
	want := refJoin(rowsOf(left), rowsOf(right), [2]int{len(tc.left), len(tc.right)}, lk, rk, merged, how)
	compareRows(t, got, want)
}

// cutRecord slices rec into consecutive records of random sizes, 0 to 50
// rows, that cover it; the caller releases them.
func cutRecord(rng *rand.Rand, rec arrow.Record) []arrow.Record {
	var out []arrow.Record
	for off := int64(0); ; {
		n := min(int64(rng.IntN(51)), rec.NumRows()-off)
		out = append(out, rec.NewSlice(off, off+n))
		if off += n; off == rec.NumRows() && rng.IntN(3) > 0 {
			return out
		}
	}
}

// TestStreamJoinErrors: a build record or a lead record of the wrong schema
// is refused naming the side, and an error from the callback stops the join;
// nothing leaks.
func TestStreamJoinErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // after firstCase's release
	left, right, spec := firstCase(t, mem, 7, 100, 100)
	if _, err := NewStreamJoin(mem, left.Schema(), right.Schema(), left, spec, 0, nil); !errors.Is(err, ErrSpec) {
		t.Errorf("the left record as the build side of an inner join: got %v, want ErrSpec", err)
	}
	stop := errors.New("stop")
	sj, err := NewStreamJoin(mem, left.Schema(), right.Schema(), right, spec, 0, func(arrow.Record) error { return stop })
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Release()
	if err := sj.Add(right); !errors.Is(err, ErrSpec) {
		t.Errorf("a right record as a lead record: got %v, want ErrSpec", err)
	}
	if err := sj.Add(left); !errors.Is(err, stop) {
		t.Errorf("callback error: got %v", err)
	}
}
