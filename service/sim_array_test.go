package service_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
)

// grid is a small <i4 array whose element at global C-order index k is k.
type grid struct {
	old, new spec.Chunks
	dt       rechunk.DType
}

// shape is the array's size per axis.
func (g grid) shape() []int64 { return g.old.Shape() }

// chunk returns chunk index (C order in chunks' grid) with its elements.
func (g grid) chunk(chunks spec.Chunks, index int) rechunk.Chunk {
	origin, extent := g.place(chunks, index)
	c, _ := rechunk.NewChunk(g.dt, extent)
	k := 0
	eachIndex(extent, func(local []int64) {
		binary.LittleEndian.PutUint32(c.Data[4*k:], uint32(g.global(origin, local)))
		k++
	})
	return c
}

// place returns where chunk index of chunks starts and its extent.
func (g grid) place(chunks spec.Chunks, index int) (origin, extent []int64) {
	origin, extent = make([]int64, len(chunks)), make([]int64, len(chunks))
	rest := index
	for a := len(chunks) - 1; a >= 0; a-- {
		i := rest % len(chunks[a])
		rest /= len(chunks[a])
		for _, n := range chunks[a][:i] {
			origin[a] += n
		}
		extent[a] = chunks[a][i]
	}
	return origin, extent
}

// global is the C-order index in the whole array of origin + local.
func (g grid) global(origin, local []int64) int64 {
	var k int64
	for a, n := range g.shape() {
		k = k*n + origin[a] + local[a]
	}
	return k
}

// eachIndex calls fn with every index of shape, in C order.
func eachIndex(shape []int64, fn func([]int64)) {
	idx := make([]int64, len(shape))
	for _, n := range shape {
		if n == 0 {
			return
		}
	}
	for {
		fn(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}

func count(chunks spec.Chunks) int {
	n := 1
	for _, axis := range chunks {
		n *= len(axis)
	}
	return n
}

// TestSimArrayRechunk: a small rechunk conserves bytes: every new chunk
// holds exactly the elements of its region, and the bytes out equal the
// bytes in.
func TestSimArrayRechunk(t *testing.T) {
	t.Parallel()
	dt, err := rechunk.ParseDType("<i4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		nodes    int
		old, new spec.Chunks
	}{
		{"2-d", 3, spec.Chunks{{4, 4, 2}, {5, 7}}, spec.Chunks{{3, 3, 3, 1}, {6, 6}}},
		{"3-d with a zero-size chunk", 2, spec.Chunks{{2, 0, 3}, {4}, {1, 2}}, spec.Chunks{{5}, {1, 3}, {3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := grid{old: tc.old, new: tc.new, dt: dt}
			c := startSim(t, tc.nodes, service.Config{}, simnet.Config{})
			ctx := testCtx(t)
			sp := spec.ArraySpec("arr", "<i4", tc.old, tc.new)
			var in int
			c.run(ctx, sp, input{chunk: func(task int) rechunk.Chunk { return g.chunk(tc.old, task) }})
			for task := range count(tc.old) {
				in += len(g.chunk(tc.old, task).Data)
			}
			out := 0
			for p := range count(tc.new) {
				got, err := c.owner("arr", p).GetChunk(ctx, "arr", p)
				if err != nil {
					t.Fatalf("new chunk %d: %v", p, err)
				}
				if want := g.chunk(tc.new, p); !bytes.Equal(got.Data, want.Data) || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
					t.Errorf("new chunk %d: shape %v, want %v; bytes differ: %v", p, got.Shape, want.Shape, !bytes.Equal(got.Data, want.Data))
				}
				out += len(got.Data)
				// Read again by every node, over the cluster's streams: the same chunk.
				for _, reader := range c.svcs {
					fetched, err := reader.FetchChunk(ctx, "arr", p)
					if err != nil || !bytes.Equal(fetched.Data, got.Data) || fmt.Sprint(fetched.Shape) != fmt.Sprint(got.Shape) {
						t.Errorf("new chunk %d fetched: shape %v, %v; differs: %v", p, fetched.Shape, err, !bytes.Equal(fetched.Data, got.Data))
					}
				}
			}
			if in != out {
				t.Errorf("%d bytes in, %d out", in, out)
			}
		})
	}
}
