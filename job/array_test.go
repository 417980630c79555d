package job

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
)

// naiveElement is the definition of the synthetic array's element bytes:
// byte k of element global is byte k%8 of the k/8-th word of its hash chain.
func naiveElement(global int64, isz int) []byte {
	out := make([]byte, isz)
	h := uint64(global)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	for k := range isz {
		out[k] = byte(h >> (8 * (k % 8)))
		if k%8 == 7 {
			h = h*0xbf58476d1ce4e5b9 + 1
		}
	}
	return out
}

// TestArrayGenMatchesDefinition: every chunk the generator fills holds, at
// each element's place, the definition's bytes of that element's global
// C-order index, for several dtypes and chunkings (edge chunks included).
func TestArrayGenMatchesDefinition(t *testing.T) {
	for _, tc := range []struct {
		dtype  string
		chunks spec.Chunks
	}{
		{"<f8", spec.Chunks{{3, 3, 1}, {4, 2}}},
		{"|u1", spec.Chunks{{2, 3}, {5}, {1, 2}}},
		{"<i2", spec.Chunks{{7}}},
		{"<c16", spec.Chunks{{2, 2}, {3}}},
	} {
		t.Run(fmt.Sprint(tc.dtype, tc.chunks), func(t *testing.T) {
			dt, err := rechunk.ParseDType(tc.dtype)
			if err != nil {
				t.Fatal(err)
			}
			g := newArrayGen(dt, tc.chunks)
			chunks := 1
			for _, axis := range tc.chunks {
				chunks *= len(axis)
			}
			for c := range chunks {
				got := g.oldChunk(c)
				start, shape := chunkBox(tc.chunks, c)
				if want := naiveChunk(g, start, shape); !bytes.Equal(got.Data, want) {
					t.Fatalf("chunk %d (start %v shape %v) differs from the definition", c, start, shape)
				}
			}
		})
	}
}

// naiveChunk builds the box (start, shape) element by element.
func naiveChunk(g *arrayGen, start, shape []int64) []byte {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	var out []byte
	idx := make([]int64, len(shape))
	for range n {
		var global int64
		for a := range shape {
			global = global*g.shape[a] + start[a] + idx[a]
		}
		out = append(out, naiveElement(global, g.dt.ItemSize())...)
		for a := len(shape) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
	}
	return out
}

// TestArrayGenCheck: check accepts every chunk the definition builds and
// names the first wrong element of a chunk with one byte changed, for each
// dtype width; a wrong shape, dtype or length is refused.
func TestArrayGenCheck(t *testing.T) {
	for _, dtype := range []string{"<f8", "|u1", "<i2", "<c16"} {
		t.Run(dtype, func(t *testing.T) {
			dt, err := rechunk.ParseDType(dtype)
			if err != nil {
				t.Fatal(err)
			}
			chunks := spec.Chunks{{3, 2}, {4, 1}}
			g := newArrayGen(dt, chunks)
			for c := range 4 {
				start, shape := chunkBox(chunks, c)
				good := rechunk.Chunk{DType: dt, Shape: shape, Data: naiveChunk(g, start, shape)}
				if err := g.check(good, chunks, c); err != nil {
					t.Fatalf("chunk %d: %v", c, err)
				}
				last := len(good.Data) - 1
				bad := good
				bad.Data = bytes.Clone(good.Data)
				bad.Data[last] ^= 1
				want := fmt.Sprintf("element %d ", last/dt.ItemSize())
				if err := g.check(bad, chunks, c); err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("chunk %d with its last byte changed: %v, want %q", c, err, want)
				}
				if err := g.check(good, chunks, (c+1)%4); err == nil { // every chunk here has its own shape
					t.Fatalf("chunk %d passed as chunk %d", c, (c+1)%4)
				}
				short := good
				short.Data = good.Data[:last]
				if err := g.check(short, chunks, c); err == nil {
					t.Fatalf("chunk %d one byte short passed", c)
				}
			}
		})
	}
}
