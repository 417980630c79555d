package receiver

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// A (rows, cols) array of bytes rechunked from rows to columns: every old
// chunk (a row) has a one-element piece for every new chunk (a column), so
// the entries of a message share their new chunks, as at bench scale's
// (1, C) -> (R, 1).
const transposeRows, transposeCols = placeGroup + 6, 3

// newTransposeFixture is a one-member receiver of that rechunk.
func newTransposeFixture(t *testing.T) *fixture {
	t.Helper()
	rows, cols := slices.Repeat([]int64{1}, transposeRows), slices.Repeat([]int64{1}, transposeCols)
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: transposeRows, Partitions: transposeCols, DType: "|u1",
		OldChunks: spec.Chunks{rows, {transposeCols}}, NewChunks: spec.Chunks{{transposeRows}, cols}}
	return newFixtureOf(t, sp, []string{"a"})
}

// transposeValue is the byte at (row, col).
func transposeValue(row, col int) byte { return byte(7*row + col) }

// rowEntry is the entry of old chunk row: a one-element piece per column,
// in reverse column order for odd rows (an entry's pieces may come in any
// order; the merge must still place each where it belongs).
func rowEntry(t *testing.T, row int) shard.Entry {
	t.Helper()
	dt, err := rechunk.ParseDType("|u1")
	if err != nil {
		t.Fatal(err)
	}
	src := rechunk.Chunk{DType: dt, Shape: []int64{1, transposeCols}, Data: make([]byte, transposeCols)}
	for j := range transposeCols {
		src.Data[j] = transposeValue(row, j)
	}
	e := shard.Entry{Task: uint64(row)}
	order := make([]int, transposeCols)
	for j := range order {
		order[j] = j
	}
	if row%2 == 1 {
		slices.Reverse(order)
	}
	for _, j := range order {
		n := len(e.Data)
		e.Data, err = rechunk.AppendPiece(e.Data, src, []splitaxes.Slice{{Start: 0, Stop: 1}, {Start: int64(j), Stop: int64(j) + 1}})
		if err != nil {
			t.Fatal(err)
		}
		e.Runs = append(e.Runs, shard.Run{Partition: uint32(j), Count: uint64(len(e.Data) - n)})
	}
	return e
}

// rowsMsg is one message with the entries and end markers of rows.
func rowsMsg(t *testing.T, rows []int) *shard.Msg {
	m := &shard.Msg{Shuffle: "s"}
	for _, r := range rows {
		m.Entries = append(m.Entries, rowEntry(t, r))
		m.Ends = append(m.Ends, shard.End{Task: uint64(r), Pieces: 1})
	}
	return m
}

// checkColumns reads every new chunk and compares it with the array's
// column.
func checkColumns(t *testing.T, f *fixture) {
	t.Helper()
	f.sh.Finish(shuffle.Sealed, nil)
	for j := range transposeCols {
		c, err := f.rc.GetChunk(context.Background(), f.sh, j)
		if err != nil {
			t.Fatalf("column %d: %v", j, err)
		}
		want := make([]byte, transposeRows)
		for i := range want {
			want[i] = transposeValue(i, j)
		}
		if !slices.Equal(c.Data, want) {
			t.Fatalf("column %d = %v, want %v", j, c.Data, want)
		}
	}
}

// TestArrayMessagePlacedTogether: one message carrying every row, more
// than a group's worth, with rows resent in it and after it, commits each
// row once and assembles every column.
func TestArrayMessagePlacedTogether(t *testing.T) {
	f := newTransposeFixture(t)
	ctx := context.Background()
	rows := make([]int, transposeRows)
	for i := range rows {
		rows[i] = transposeRows - 1 - i // the merge takes any order
	}
	rows = append(rows, 3, placeGroup+1) // resent in the same message
	if err := f.rc.Receive(ctx, f.sh, rowsMsg(t, rows)); err != nil {
		t.Fatal(err)
	}
	if err := f.rc.Receive(ctx, f.sh, rowsMsg(t, []int{0, 5})); err != nil {
		t.Fatal(err)
	}
	if len(f.commits) != transposeRows {
		t.Fatalf("%d commits, want one per row (%d)", len(f.commits), transposeRows)
	}
	checkColumns(t, f)
}

// checkRefusedStoring receives m, which must be refused with code, and
// checks that the first attempts of rows were stored all the same.
func checkRefusedStoring(t *testing.T, f *fixture, m *shard.Msg, code wire.RefusalCode, rows ...uint64) {
	t.Helper()
	var r *shuffle.Refusal
	if err := f.rc.Receive(context.Background(), f.sh, m); !errors.As(err, &r) || r.Code != code {
		t.Fatalf("Receive = %v, want a refusal with code %v", err, code)
	}
	for _, row := range rows {
		if rs := f.sh.recv[shuffle.AttemptKey{Task: row}]; rs == nil || rs.stored != 1 {
			t.Fatalf("row %d beside the refused entry: %+v, want stored", row, rs)
		}
	}
}

// TestArrayMessageRefusedEntry: a malformed entry ends the message there:
// the rows before it are stored and commit, the ones after it are not
// claimed, so the sender's resend of them is taken in full.
func TestArrayMessageRefusedEntry(t *testing.T) {
	f := newTransposeFixture(t)
	ctx := context.Background()
	m := rowsMsg(t, []int{0, 1, 2, 3})
	m.Entries[2].Runs[0].Count++ // the runs no longer cover the data
	checkRefusedStoring(t, f, m, wire.RefuseBadRequest, 0, 1)
	rest := make([]int, 0, transposeRows)
	for i := 2; i < transposeRows; i++ {
		rest = append(rest, i)
	}
	if err := f.rc.Receive(ctx, f.sh, rowsMsg(t, append([]int{0, 1}, rest...))); err != nil {
		t.Fatal(err)
	}
	checkColumns(t, f)
}

// TestArrayMessageDiffersMidGroup: a replayed row whose piece differs from
// the placed one is refused as a failure, and the other rows of its group
// are stored all the same.
func TestArrayMessageDiffersMidGroup(t *testing.T) {
	f := newTransposeFixture(t)
	ctx := context.Background()
	if err := f.rc.Receive(ctx, f.sh, rowsMsg(t, []int{4})); err != nil {
		t.Fatal(err)
	}
	m := rowsMsg(t, []int{3, 4, 5})
	m.Entries[1].Attempt, m.Ends[1].Attempt = 1, 1
	m.Entries[1].Data[len(m.Entries[1].Data)-1] ^= 0xff // the last column's element
	checkRefusedStoring(t, f, m, wire.RefuseFailed, 3, 5)
	if rs := f.sh.recv[shuffle.AttemptKey{Task: 4, Attempt: 1}]; rs != nil && rs.seen[0] {
		t.Fatal("the refused replay stays claimed: its resend would be dropped")
	}
}
