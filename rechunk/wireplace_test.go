package rechunk

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// TestPlaceOldWire places every piece of random plans in its wire form, as
// a receiver does, each twice: the first places it (the contiguous path or
// the general one), the second only compares. Every new chunk must equal
// the array's slice; a resent piece with other bytes is refused with
// ErrPieceDiffers, and one whose header names another shape with ErrShape,
// changing nothing.
func TestPlaceOldWire(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	dt := mustDType("<i2")
	for range 200 {
		ndim := 1 + r.IntN(3)
		old, new := make([][]int64, ndim), make([][]int64, ndim)
		for d := range ndim {
			total := 1 + r.Int64N(9)
			old[d], new[d] = randomSizes(r, total, 5), randomSizes(r, total, 5)
		}
		checkPlaceOldWire(t, old, new, dt)
	}
}

func checkPlaceOldWire(t *testing.T, oldSizes, newSizes [][]int64, dt DType) {
	t.Helper()
	plan, err := splitaxes.New(oldSizes, newSizes)
	if err != nil {
		t.Fatal(err)
	}
	asm := map[string]*Assembler{}
	for _, oi := range grid(plan.OldGrid()) {
		src := indexChunk(t, dt, oldSizes, oi)
		seq, err := plan.NDSplitsReused(oi)
		if err != nil {
			t.Fatal(err)
		}
		for s := range seq {
			b, err := AppendPiece(nil, src, s.Slices)
			if err != nil {
				t.Fatal(err)
			}
			key := fmt.Sprint(s.NewChunk)
			if asm[key] == nil {
				if asm[key], err = NewAssembler(plan, s.NewChunk, dt, Config{}); err != nil {
					t.Fatal(err)
				}
			}
			a := asm[key]
			if placed, err := a.PlaceOldWire(oi, b); err != nil || !placed {
				t.Fatalf("old %v -> new %v: placed %v, %v", oi, s.NewChunk, placed, err)
			}
			if placed, err := a.PlaceOldWire(oi, b); err != nil || placed {
				t.Fatalf("old %v -> new %v resent: placed %v, %v", oi, s.NewChunk, placed, err)
			}
			checkWireRefusals(t, a, oi, b)
		}
	}
	for _, ni := range grid(plan.NewGrid()) {
		a := asm[fmt.Sprint(ni)]
		if a == nil {
			continue // an empty new chunk: no piece
		}
		c, err := a.Chunk()
		if err != nil {
			t.Fatal(err)
		}
		if want := indexChunk(t, dt, newSizes, ni); !slices.Equal(c.Data, want.Data) {
			t.Fatalf("old %v new %v chunk %v: %v, want %v", oldSizes, newSizes, ni, c.Data, want.Data)
		}
	}
}

// checkWireRefusals resends b, placed from old chunk oi, with its last byte
// changed and with a header one longer along its first axis: both must be
// refused, and the placed count must not move.
func checkWireRefusals(t *testing.T, a *Assembler, oi []int, b []byte) {
	t.Helper()
	n := a.Placed()
	piece, err := DecodePiece(b, a.dtype)
	if err != nil {
		t.Fatal(err)
	}
	if len(piece.Data) > 0 {
		changed := slices.Clone(b)
		changed[len(changed)-1] ^= 1
		if _, err := a.PlaceOldWire(oi, changed); !errors.Is(err, ErrPieceDiffers) {
			t.Fatalf("old %v: changed bytes: %v, want ErrPieceDiffers", oi, err)
		}
	}
	longer := slices.Clone(piece.Shape)
	longer[0]++
	wrong := appendShape(nil, longer)
	wrong = append(wrong, make([]byte, int(elems(longer))*a.dtype.ItemSize())...)
	if _, err := a.PlaceOldWire(oi, wrong); err == nil {
		t.Fatalf("old %v: a piece of shape %v placed where %v goes", oi, longer, piece.Shape)
	}
	if a.Placed() != n {
		t.Fatalf("old %v: refused pieces moved the placed count from %d to %d", oi, n, a.Placed())
	}
}

func elems(shape []int64) int64 {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	return n
}
