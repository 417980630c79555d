package zarr

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// TestPadTrimAgainstReference checks pad and trimTo on random shapes
// against element-by-element references: pad against refPadded, trimTo
// against rechunk.AppendCut.
func TestPadTrimAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		ndim := r.IntN(5)
		full, trim := make([]int64, ndim), make([]int64, ndim)
		for d := range ndim {
			full[d] = 1 + r.Int64N(5)
			trim[d] = r.Int64N(full[d] + 1)
			if r.IntN(2) == 0 {
				trim[d] = full[d]
			}
		}
		item := []int{1, 2, 4, 8, 16}[r.IntN(5)]
		checkPadTrim(t, i, r, full, trim, item)
	}
}

// checkPadTrim pads a random region to full and trims it back.
func checkPadTrim(t *testing.T, i int, r *rand.Rand, full, trim []int64, item int) {
	dt := mustDType(t, map[int]string{1: "|u1", 2: "<u2", 4: "<u4", 8: "<u8", 16: "<c16"}[item])
	tn, _ := rechunk.NumBytes(dt, trim)
	fn, _ := rechunk.NumBytes(dt, full)
	data, fill := randomBytes(r, tn), randomBytes(r, item)
	zeroIdx := make([]int, len(full))
	padded := pad(data, full, trim, fill, fn)
	if want := refPadded(data, trim, full, zeroIdx, fill); !bytes.Equal(padded, want) {
		t.Fatalf("case %d: pad(full %v, trim %v, item %d) differs from the reference", i, full, trim, item)
	}
	ranges := make([]splitaxes.Slice, len(full))
	for d := range full {
		ranges[d] = splitaxes.Slice{Start: 0, Stop: trim[d]}
	}
	want, _, err := rechunk.AppendCut(nil, rechunk.Chunk{DType: dt, Shape: full, Data: padded}, ranges)
	if err != nil {
		t.Fatal(err)
	}
	if got := trimTo(padded, full, trim, item, tn); !bytes.Equal(got, want) || !bytes.Equal(got, data) {
		t.Fatalf("case %d: trimTo(full %v, trim %v, item %d) differs", i, full, trim, item)
	}
}

func TestTile(t *testing.T) {
	cases := []struct {
		name string
		n    int
		elem []byte
	}{
		{"zero fill clears", 12, []byte{0, 0, 0, 0}},
		{"pattern", 12, []byte{1, 2, 3}},
		{"empty buffer", 0, []byte{9}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := bytes.Repeat([]byte{0xee}, c.n)
			tile(buf, c.elem)
			if want := bytes.Repeat(c.elem, c.n/len(c.elem)); !bytes.Equal(buf, want) {
				t.Fatalf("tile = % x, want % x", buf, want)
			}
		})
	}
}
