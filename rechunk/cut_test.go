package rechunk

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

type sl = splitaxes.Slice

const U = Unknown

func rg(start, stop int64) sl { return sl{Start: start, Stop: stop} }

func mustDType(s string) DType {
	d, err := ParseDType(s)
	if err != nil {
		panic(err)
	}
	return d
}

// iota returns a |u1 chunk whose elements are 0, 1, 2, ...
func iota(shape ...int64) Chunk {
	c, _ := NewChunk(mustDType("|u1"), shape)
	for i := range c.Data {
		c.Data[i] = byte(i)
	}
	return c
}

func TestCut(t *testing.T) {
	tests := []struct {
		name      string
		src       Chunk
		ranges    []sl
		wantShape []int64
		want      []byte
	}{
		{"1-d middle", iota(6), []sl{rg(1, 4)}, []int64{3}, []byte{1, 2, 3}},
		{"1-d open-ended", iota(6), []sl{rg(4, U)}, []int64{2}, []byte{4, 5}},
		{"1-d empty", iota(6), []sl{rg(6, 6)}, []int64{0}, nil},
		{"2-d rows", iota(3, 4), []sl{rg(1, 3), rg(0, 4)}, []int64{2, 4}, []byte{4, 5, 6, 7, 8, 9, 10, 11}},
		{"2-d column", iota(3, 4), []sl{rg(0, 3), rg(2, 3)}, []int64{3, 1}, []byte{2, 6, 10}},
		{"2-d block", iota(3, 4), []sl{rg(1, 3), rg(1, 3)}, []int64{2, 2}, []byte{5, 6, 9, 10}},
		{"3-d inner planes", iota(2, 2, 3), []sl{rg(0, 2), rg(1, 2), rg(0, U)}, []int64{2, 1, 3}, []byte{3, 4, 5, 9, 10, 11}},
		{"0-d", iota(), []sl{}, []int64{}, []byte{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Cut(tt.src, tt.ranges)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Shape, tt.wantShape) || !bytes.Equal(got.Data, tt.want) || got.DType != tt.src.DType {
				t.Fatalf("got %v %v, want %v %v", got.Shape, got.Data, tt.wantShape, tt.want)
			}
		})
	}
}

func TestCutErrors(t *testing.T) {
	bad := iota(2, 2)
	bad.Data = bad.Data[:3]
	tests := []struct {
		name   string
		src    Chunk
		ranges []sl
		want   error
	}{
		{"stop past end", iota(4), []sl{rg(0, 5)}, ErrSlice},
		{"start after stop", iota(4), []sl{rg(3, 2)}, ErrSlice},
		{"negative start", iota(4), []sl{rg(-1, 2)}, ErrSlice},
		{"too few ranges", iota(2, 2), []sl{rg(0, 1)}, ErrSlice},
		{"data too short", bad, []sl{rg(0, 1), rg(0, 1)}, ErrShape},
		{"negative shape", Chunk{DType: mustDType("|u1"), Shape: []int64{-1}}, []sl{rg(0, 0)}, ErrShape},
		{"no dtype", Chunk{Shape: []int64{1}, Data: []byte{1}}, []sl{rg(0, 1)}, ErrDType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Cut(tt.src, tt.ranges); !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNumBytesOverflow(t *testing.T) {
	if _, err := NumBytes(mustDType("<f8"), []int64{1 << 40, 1 << 40}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

func TestAppendCutKeepsPrefix(t *testing.T) {
	prefix := []byte("head")
	out, shape, err := AppendCut(prefix, iota(3, 4), []sl{rg(0, 3), rg(3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "head\x03\x07\x0b" || !slices.Equal(shape, []int64{3, 1}) {
		t.Fatalf("got %q %v", out, shape)
	}
	if out, _, err := AppendCut(prefix, iota(3), []sl{rg(0, 9)}); err == nil || string(out) != "head" {
		t.Fatalf("failed cut changed dst: %q %v", out, err)
	}
}

// randomCut returns random in-bounds ranges of shape (some open-ended) and
// the block they select.
func randomCut(r *rand.Rand, shape []int64) (ranges []sl, origin, count []int64) {
	for _, n := range shape {
		a, b := r.Int64N(n+1), r.Int64N(n+1)
		a, b = min(a, b), max(a, b)
		s := sl{Start: a, Stop: b}
		if b == n && r.IntN(2) == 0 {
			s.Stop = U
		}
		if r.IntN(3) == 0 {
			s = sl{Start: 0, Stop: n} // whole axes make longer runs
			a, b = 0, n
		}
		ranges, origin, count = append(ranges, s), append(origin, a), append(count, b-a)
	}
	return ranges, origin, count
}

func TestCutAgainstReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 2000 {
		dt := mustDType(allDTypes[r.IntN(len(allDTypes))])
		shape := make([]int64, r.IntN(5))
		for d := range shape {
			shape[d] = r.Int64N(6)
		}
		src := randomChunk(r, dt, shape)
		ranges, origin, count := randomCut(r, shape)
		got, err := Cut(src, ranges)
		if err != nil {
			t.Fatalf("case %d: %v", n, err)
		}
		if want := refCut(src, origin, count); !bytes.Equal(got.Data, want) || !slices.Equal(got.Shape, count) {
			t.Fatalf("case %d: %s %v cut %v: got %v %x, want %v %x", n, dt, shape, ranges, got.Shape, got.Data, count, want)
		}
	}
}
