package rechunk

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlaceOldWire places every piece of random plans in its wire form, as
// a receiver does, each twice: the first places it (the contiguous path or
// the general one), the second only compares. Every new chunk must equal
// the array's slice; a resent piece with other bytes is refused with
// ErrPieceDiffers, and one whose header names another shape with ErrShape,
// changing nothing.
func TestPlaceOldWire(t *testing.T) {
	dt := mustDType("<i2")
	randomPlans(rand.New(rand.NewPCG(11, 12)), func(old, new [][]int64) {
		plan, asm := placeEvery(t, old, new, dt, func(a *Assembler, oi []int, b []byte) {
			if placed, err := a.PlaceOldWire(oi, b); err != nil || !placed {
				t.Fatalf("old %v -> new %v: placed %v, %v", oi, a.index, placed, err)
			}
			if placed, err := a.PlaceOldWire(oi, b); err != nil || placed {
				t.Fatalf("old %v -> new %v resent: placed %v, %v", oi, a.index, placed, err)
			}
			checkWireRefusals(t, a, oi, b)
		})
		checkAssembled(t, plan, asm, new, dt)
	})
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
