package rechunk

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

func mustPlan(t *testing.T, old, new [][]int64) *splitaxes.Plan {
	t.Helper()
	p, err := splitaxes.New(old, new)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustAssembler(t *testing.T, p *splitaxes.Plan, idx []int, dt string) *Assembler {
	t.Helper()
	a, err := NewAssembler(p, idx, mustDType(dt), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func u1(shape []int64, data ...byte) Chunk {
	return Chunk{DType: mustDType("|u1"), Shape: shape, Data: data}
}

// TestAssemble2D assembles new chunk [0 0] of a (4, 4) |u1 array rechunked
// from (2, 2) chunks to one (4, 4) chunk, placing pieces out of order.
func TestAssemble2D(t *testing.T) {
	p := mustPlan(t, [][]int64{{2, 2}, {2, 2}}, [][]int64{{4}, {4}})
	a := mustAssembler(t, p, []int{0, 0}, "|u1")
	pieces := map[[2]int][]byte{{1, 1}: {10, 11, 14, 15}, {0, 0}: {0, 1, 4, 5}, {1, 0}: {8, 9, 12, 13}, {0, 1}: {2, 3, 6, 7}}
	order := [][2]int{{1, 1}, {0, 0}, {1, 0}, {0, 1}}
	for n, k := range order {
		if a.Complete() {
			t.Fatalf("complete after %d pieces", n)
		}
		if err := a.Place(k[:], u1([]int64{2, 2}, pieces[k]...)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := a.Chunk()
	if err != nil {
		t.Fatal(err)
	}
	if want := iota(4, 4); !bytes.Equal(c.Data, want.Data) || !slices.Equal(c.Shape, want.Shape) {
		t.Fatalf("got %v %v", c.Shape, c.Data)
	}
	if a.Placed() != 4 || a.Needed() != 4 {
		t.Fatalf("placed %d needed %d", a.Placed(), a.Needed())
	}
}

func TestAssemblerRefuses(t *testing.T) {
	p := mustPlan(t, [][]int64{{2, 2}, {3}}, [][]int64{{4}, {1, 2}})
	good := u1([]int64{2, 2}, 1, 2, 3, 4) // split [0 0] of new chunk [0 1]
	tests := []struct {
		name  string
		split []int
		piece Chunk
		want  error
	}{
		{"wrong dtype", []int{0, 0}, Chunk{DType: mustDType("|i1"), Shape: []int64{2, 2}, Data: good.Data}, ErrDTypeMismatch},
		{"wrong shape", []int{0, 0}, u1([]int64{2, 1}, 1, 2), ErrShape},
		{"wrong ndim", []int{0, 0}, u1([]int64{4}, 1, 2, 3, 4), ErrShape},
		{"short data", []int{0, 0}, u1([]int64{2, 2}, 1, 2, 3), ErrShape},
		{"split out of range", []int{2, 0}, good, ErrSplitIndex},
		{"split on single-piece axis", []int{0, 1}, good, ErrSplitIndex},
		{"split wrong ndim", []int{0}, good, ErrSplitIndex},
		{"negative split", []int{-1, 0}, good, ErrSplitIndex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustAssembler(t, p, []int{0, 1}, "|u1")
			if err := a.Place(tt.split, tt.piece); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if a.Placed() != 0 || len(slices.Collect(a.Missing())) != 2 {
				t.Fatalf("refused piece changed state: placed %d", a.Placed())
			}
		})
	}
}

func TestAssemblerDuplicateAndMissing(t *testing.T) {
	p := mustPlan(t, [][]int64{{1, 1, 1}}, [][]int64{{3}})
	a := mustAssembler(t, p, []int{0}, "<i2")
	piece := Chunk{DType: mustDType("<i2"), Shape: []int64{1}, Data: []byte{7, 0}}
	if err := a.Place([]int{1}, piece); err != nil {
		t.Fatal(err)
	}
	if err := a.Place([]int{1}, piece); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("second place: %v, want ErrDuplicate", err)
	}
	if got := slices.Collect(a.Missing()); !slices.EqualFunc(got, [][]int{{0}, {2}}, slices.Equal) {
		t.Fatalf("missing %v", got)
	}
	if _, err := a.Chunk(); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Chunk: %v, want ErrIncomplete", err)
	}
	if err := a.PlaceOld([]int{0}, piece); err != nil {
		t.Fatal(err)
	}
	if err := a.PlaceOld([]int{2}, piece); err != nil {
		t.Fatal(err)
	}
	if c, err := a.Chunk(); err != nil || !bytes.Equal(c.Data, []byte{7, 0, 7, 0, 7, 0}) {
		t.Fatalf("Chunk = %v, %v", c, err)
	}
}

func TestPlaceOldNotContributing(t *testing.T) {
	p := mustPlan(t, [][]int64{{2, 2}}, [][]int64{{1, 3}})
	a := mustAssembler(t, p, []int{0}, "|u1")
	if err := a.PlaceOld([]int{1}, u1([]int64{1}, 0)); !errors.Is(err, ErrSplitIndex) {
		t.Fatalf("got %v, want ErrSplitIndex", err)
	}
	if err := a.PlaceOld([]int{5}, u1([]int64{1}, 0)); !errors.Is(err, splitaxes.ErrIndex) {
		t.Fatalf("got %v, want splitaxes.ErrIndex", err)
	}
}

func TestAssemblerUnknownAxis(t *testing.T) {
	p := mustPlan(t, [][]int64{{U, U}, {2, 2}}, [][]int64{{U, U}, {4}})
	a := mustAssembler(t, p, []int{1, 0}, "|u1")
	if err := a.Place([]int{0, 1}, u1([]int64{3, 2}, 2, 3, 6, 7, 10, 11)); err != nil {
		t.Fatal(err)
	}
	if err := a.Place([]int{0, 0}, u1([]int64{2, 2}, 0, 1, 4, 5)); !errors.Is(err, ErrShape) {
		t.Fatalf("disagreeing unknown size: %v, want ErrShape", err)
	}
	if err := a.Place([]int{0, 0}, u1([]int64{3, 2}, 0, 1, 4, 5, 8, 9)); err != nil {
		t.Fatal(err)
	}
	c, err := a.Chunk()
	if want := iota(3, 4); err != nil || !bytes.Equal(c.Data, want.Data) || !slices.Equal(c.Shape, want.Shape) {
		t.Fatalf("got %v %v %v", c.Shape, c.Data, err)
	}
}

func TestAssemblerNoPieces(t *testing.T) {
	p := mustPlan(t, [][]int64{{0}, {U}}, [][]int64{{0}, {U}})
	a := mustAssembler(t, p, []int{0, 0}, "<f8")
	c, err := a.Chunk()
	if err != nil || !a.Complete() || len(c.Data) != 0 || !slices.Equal(c.Shape, []int64{0, 0}) {
		t.Fatalf("got %v %v complete %v", c, err, a.Complete())
	}
}

func TestNewAssemblerErrors(t *testing.T) {
	p := mustPlan(t, [][]int64{{2}}, [][]int64{{2}})
	if _, err := NewAssembler(p, []int{1}, mustDType("|u1"), Config{}); !errors.Is(err, splitaxes.ErrIndex) {
		t.Fatalf("got %v, want splitaxes.ErrIndex", err)
	}
	if _, err := NewAssembler(p, []int{0}, DType{}, Config{}); !errors.Is(err, ErrDType) {
		t.Fatalf("got %v, want ErrDType", err)
	}
}

func TestAssemblerAlloc(t *testing.T) {
	p := mustPlan(t, [][]int64{{2, 2}, {2, 2}}, [][]int64{{4}, {4}})
	refuse := true
	cfg := Config{Alloc: func(n int) []byte {
		if refuse {
			return nil
		}
		return bytes.Repeat([]byte{0xaa}, n) // not zeroed: every byte must be overwritten
	}}
	a, err := NewAssembler(p, []int{0, 0}, mustDType("|u1"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pieces := map[[2]int][]byte{{0, 0}: {0, 1, 4, 5}, {0, 1}: {2, 3, 6, 7}, {1, 0}: {8, 9, 12, 13}, {1, 1}: {10, 11, 14, 15}}
	if err := a.Place([]int{0, 0}, u1([]int64{2, 2}, pieces[[2]int{0, 0}]...)); !errors.Is(err, ErrAlloc) || a.Placed() != 0 {
		t.Fatalf("refused alloc: %v, placed %d", err, a.Placed())
	}
	refuse = false
	for k, data := range pieces {
		if err := a.Place(k[:], u1([]int64{2, 2}, data...)); err != nil {
			t.Fatal(err)
		}
	}
	if c, err := a.Chunk(); err != nil || !bytes.Equal(c.Data, iota(4, 4).Data) {
		t.Fatalf("got %v %v", c.Data, err)
	}
}

func TestAssemblerAllocWrongSize(t *testing.T) {
	p := mustPlan(t, [][]int64{{2}}, [][]int64{{2}})
	a, err := NewAssembler(p, []int{0}, mustDType("|u1"), Config{Alloc: func(n int) []byte { return make([]byte, n+1) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Place([]int{0}, u1([]int64{2}, 1, 2)); !errors.Is(err, ErrAlloc) {
		t.Fatalf("got %v, want ErrAlloc", err)
	}
}

// TestPlaceOldOnce: a piece placed again with the same bytes is accepted and
// placed once; with other bytes it is refused and the chunk keeps the first.
func TestPlaceOldOnce(t *testing.T) {
	p := mustPlan(t, [][]int64{{2, 2}, {2, 2}}, [][]int64{{4}, {4}})
	a := mustAssembler(t, p, []int{0, 0}, "|u1")
	if placed, err := a.PlaceOldOnce([]int{1, 0}, u1([]int64{2, 2}, 8, 9, 12, 13)); !placed || err != nil {
		t.Fatalf("first placement: placed %v, %v", placed, err)
	}
	if placed, err := a.PlaceOldOnce([]int{1, 0}, u1([]int64{2, 2}, 8, 9, 12, 13)); placed || err != nil {
		t.Fatalf("same bytes again: placed %v, %v; want not placed, no error", placed, err)
	}
	if _, err := a.PlaceOldOnce([]int{1, 0}, u1([]int64{2, 2}, 8, 9, 12, 99)); !errors.Is(err, ErrPieceDiffers) {
		t.Fatalf("other bytes: %v, want ErrPieceDiffers", err)
	}
	if a.Placed() != 1 {
		t.Fatalf("%d pieces placed, want 1", a.Placed())
	}
}
