package rechunk

import (
	"math/rand/v2"
	"slices"
)

// forEachIndex calls f with every index of a block of count elements per
// axis, in C order (once for 0 axes, never if a count is 0).
func forEachIndex(count []int64, f func(idx []int64)) {
	if slices.Contains(count, 0) {
		return
	}
	idx := make([]int64, len(count))
	for {
		f(idx)
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// refCut is the reference slicing: element by element.
func refCut(src Chunk, origin, count []int64) []byte {
	item := int64(src.DType.ItemSize())
	out := []byte{}
	forEachIndex(count, func(idx []int64) {
		var lin int64
		for d := range idx {
			lin = lin*src.Shape[d] + origin[d] + idx[d]
		}
		out = append(out, src.Data[lin*item:(lin+1)*item]...)
	})
	return out
}

// randomChunk returns a chunk of random bytes.
func randomChunk(r *rand.Rand, dt DType, shape []int64) Chunk {
	c, err := NewChunk(dt, shape)
	if err != nil {
		panic(err)
	}
	for i := range c.Data {
		c.Data[i] = byte(r.Uint32())
	}
	return c
}

// randomChunking returns sizes adding up to total, with some zeros.
func randomChunking(r *rand.Rand, total int64) []int64 {
	var out []int64
	for left := total; left > 0 || (r.IntN(5) == 0 && len(out) < 6); {
		s := r.Int64N(min(left, 4) + 1)
		out = append(out, s)
		left -= s
	}
	return out
}

func starts(sizes []int64) []int64 {
	out := make([]int64, len(sizes)+1)
	for i, s := range sizes {
		out[i+1] = out[i] + s
	}
	return out
}

// grid returns every index of a grid, last axis fastest.
func grid(n []int) [][]int {
	out := [][]int{{}}
	for _, k := range n {
		var next [][]int
		for _, idx := range out {
			for i := range k {
				next = append(next, append(slices.Clone(idx), i))
			}
		}
		out = next
	}
	return out
}

// block returns the origin and size of chunk idx of a chunking.
func block(chunks [][]int64, idx []int) (origin, count []int64) {
	for d, i := range idx {
		origin = append(origin, starts(chunks[d])[i])
		count = append(count, chunks[d][i])
	}
	return origin, count
}
