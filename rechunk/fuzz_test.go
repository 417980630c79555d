package rechunk

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// FuzzCut feeds Cut chunks and ranges as they could arrive from outside: any
// shape, any byte count, any ranges. It must refuse or agree with refCut.
func FuzzCut(f *testing.F) {
	f.Add("<f8", []byte{2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte{1}, 48), []byte{0, 2, 1, 3})
	f.Add("|u1", []byte{4, 0, 0, 0, 0, 0, 0, 0}, []byte{1, 2, 3, 4}, []byte{1, 0xff})
	f.Add("<i2", []byte{}, []byte{9, 9}, []byte{})
	f.Fuzz(func(t *testing.T, dts string, shapeBytes, data, rangeBytes []byte) {
		dt, _ := ParseDType(dts)
		src := Chunk{DType: dt, Shape: int64s(shapeBytes), Data: data}
		ranges := fuzzRanges(rangeBytes, len(src.Shape))
		got, err := Cut(src, ranges)
		if err != nil {
			return
		}
		origin, count, _ := resolve(src.Shape, ranges)
		if want := refCut(src, origin, count); !bytes.Equal(got.Data, want) || !slices.Equal(got.Shape, count) {
			t.Fatalf("%v cut %v: got %x, want %x", src.Shape, ranges, got.Data, want)
		}
	})
}

// int64s decodes little-endian int64s.
func int64s(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// fuzzRanges decodes one range per axis from pairs of bytes; 0xff as a stop
// means open-ended.
func fuzzRanges(b []byte, n int) []splitaxes.Slice {
	out := make([]splitaxes.Slice, n)
	for d := range n {
		if 2*d+1 >= len(b) {
			break
		}
		out[d] = splitaxes.Slice{Start: int64(b[2*d]), Stop: int64(b[2*d+1])}
		if b[2*d+1] == 0xff {
			out[d].Stop = U
		}
	}
	return out
}

// FuzzRoundTrip plans a rechunk from fuzzed chunkings, cuts every old chunk
// and assembles every new chunk, and compares with the reference slicing.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(2), uint8(0), []byte{3, 1, 2, 0, 2, 2, 1, 4, 0, 4})
	f.Add(uint8(1), uint8(12), []byte{9, 4, 0, 5, 9})
	f.Add(uint8(3), uint8(3), []byte{2, 1, 1, 2, 0, 3, 3, 0, 3, 1, 0})
	f.Fuzz(func(t *testing.T, ndim, dtIndex uint8, layoutBytes []byte) {
		l := fuzzLayout(int(ndim%5), layoutBytes)
		p, err := l.plan()
		if err != nil {
			t.Fatalf("plan of %+v: %v", l, err)
		}
		r := rand.New(rand.NewPCG(uint64(len(layoutBytes)), 1))
		full := randomChunk(r, mustDType(allDTypes[int(dtIndex)%len(allDTypes)]), l.shape)
		assembleAll(t, r, p, l, full, cutAll(t, p, l, full))
	})
}

// fuzzLayout decodes per axis a total (< 8) and old and new chunkings.
func fuzzLayout(ndim int, b []byte) layout {
	next := func() int64 {
		if len(b) == 0 {
			return 0
		}
		v := b[0]
		b = b[1:]
		return int64(v)
	}
	chunking := func(total int64) []int64 {
		var out []int64
		for left := total; left > 0; {
			s := min(next()%5, left)
			if len(out) == 8 {
				s = left
			}
			out = append(out, s)
			left -= s
		}
		return out
	}
	var l layout
	for range ndim {
		total := next() % 8
		old, new := chunking(total), chunking(total)
		l.shape, l.old, l.new, l.unknown = append(l.shape, total), append(l.old, old), append(l.new, new), append(l.unknown, false)
	}
	return l
}

// FuzzDecodePieceTo feeds arbitrary bytes to the receivers' piece decoder
// that reuses a shape: it never panics, agrees with DecodePiece, and an
// accepted piece's bytes are exactly its shape's.
func FuzzDecodePieceTo(f *testing.F) {
	src := Chunk{DType: mustDType("<f8"), Shape: []int64{2, 3}, Data: make([]byte, 48)}
	seed, err := AppendPiece(nil, src, []splitaxes.Slice{{Start: 1, Stop: 2}, {Start: 0, Stop: 2}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{40})
	shape := make([]int64, 0, 2)
	f.Fuzz(func(t *testing.T, b []byte) {
		dt := mustDType("<f8")
		c, err := DecodePiece(b, dt)
		c2, err2 := DecodePieceTo(shape, b, dt)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("DecodePiece: %v, DecodePieceTo: %v", err, err2)
		}
		if err != nil {
			return
		}
		if !slices.Equal(c.Shape, c2.Shape) || len(c.Data) != len(c2.Data) {
			t.Fatalf("DecodePiece %v (%d bytes), DecodePieceTo %v (%d bytes)", c.Shape, len(c.Data), c2.Shape, len(c2.Data))
		}
		// A shape with a zero extent may claim sizes whose product NumBytes
		// calls too large (Validate refuses it before any use); its piece
		// holds no bytes.
		if n, err := NumBytes(dt, c.Shape); (err == nil && n != len(c.Data)) || (err != nil && len(c.Data) != 0) {
			t.Fatalf("accepted shape %v with %d bytes (NumBytes %d, %v)", c.Shape, len(c.Data), n, err)
		}
	})
}
