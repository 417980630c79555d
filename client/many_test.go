package client

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

// TestManyStream hands the batches of a multi-partition DoGet to their
// partitions, as a node that packs sends them and as one that does not
// (a batch per partition, then an empty end batch): the same rows reach
// the same partitions, ends come in order, and a stream that names the
// wrong partition or has rows past the last end is incomplete.
func TestManyStream(t *testing.T) {
	rec := table.GenTask(memory.DefaultAllocator, table.GenConfig{Rows: 10, PayloadBytes: 4, Seed: 1}, 0, 1)
	defer rec.Release()
	empty := rec.NewSlice(0, 0)
	defer empty.Release()
	type batch struct {
		rec arrow.Record
		md  string
	}
	parts := []int{7, 3, 5, 9}
	want := "7:0-4 done7 done3 5:4-10 5:0-2 done5 9:2-10 done9"
	tests := []struct {
		name    string
		batches []batch
		want    string
		bad     bool
	}{
		{"packed", []batch{{rec, `{"ends":[[7,4],[3,4]]}`}, {rec.NewSlice(0, 2), `{"ends":[[5,2]]}`}, {rec.NewSlice(2, 10), ""}, {empty, `{"ends":[[9,0]]}`}}, want, false},
		{"unpacked", []batch{{rec.NewSlice(0, 4), ""}, {empty, `{"partition":7,"end":true}`}, {empty, `{"partition":3,"end":true}`},
			{rec.NewSlice(4, 10), ""}, {rec.NewSlice(0, 2), ""}, {empty, `{"partition":5,"end":true}`}, {rec.NewSlice(2, 10), ""}, {empty, `{"partition":9,"end":true}`}}, want, false},
		{"wrong partition", []batch{{rec, `{"ends":[[3,4]]}`}}, "", true},
		{"rows after the last end", []batch{{rec, `{"ends":[[7,1],[3,1],[5,1],[9,1]]}`}}, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := &manyStream{parts: parts,
				fn: func(p int, r arrow.Record) error {
					got = append(got, fmt.Sprintf("%d:%d-%d", p, firstID(r), firstID(r)+r.NumRows()))
					return nil
				},
				done: func(p int) error { got = append(got, fmt.Sprintf("done%d", p)); return nil }}
			var err error
			for _, b := range tc.batches {
				if err = s.batch(b.rec, []byte(b.md)); err != nil {
					break
				}
			}
			if tc.bad != errors.Is(err, ErrIncomplete) {
				t.Fatalf("error %v, want incomplete: %v", err, tc.bad)
			}
			if !tc.bad && !slices.Equal(got, strings.Fields(tc.want)) {
				t.Errorf("got %v, want %s", got, tc.want)
			}
		})
	}
}

// firstID is the id of rec's first row (0 if none).
func firstID(rec arrow.Record) int64 {
	if rec.NumRows() == 0 {
		return 0
	}
	return rec.Column(1).(*array.Int64).Value(0)
}
