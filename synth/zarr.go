package synth

import (
	"fmt"
	"math"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/zarr"
)

// ZarrMeta builds the metadata of a synthetic array from the gen-zarr
// flags: shape, chunk shape, NumPy dtype and compressor (none, zlib, zstd).
func ZarrMeta(shape, chunks []int64, dtypeS, comp string) (zarr.Meta, error) {
	dt, err := rechunk.ParseDType(dtypeS)
	if err != nil {
		return zarr.Meta{}, err
	}
	m := zarr.Meta{Shape: shape, Chunks: chunks, DType: dt, FillValue: []byte("0")}
	switch comp {
	case "none":
	case "zlib", "zstd":
		m.Compressor = &zarr.Compressor{ID: comp, Level: 1}
	default:
		return m, fmt.Errorf("--compressor %q: want none, zlib or zstd", comp)
	}
	return m, m.Validate()
}

// Zarr writes a synthetic Zarr v2 array at dir: element i (C order)
// holds float64(i) for float dtypes, i modulo the type's range for integers.
func Zarr(dir string, m zarr.Meta) error {
	a, err := zarr.Create(dir, m)
	if err != nil {
		return err
	}
	defer a.Close()
	grid := a.Grid()
	n := 1
	for _, g := range grid {
		n *= g
	}
	for t := range n {
		idx := splitaxes.Unravel(t, grid)
		c, err := ZarrChunk(a, idx)
		if err != nil {
			return err
		}
		if err := a.WriteChunk(idx, c); err != nil {
			return err
		}
	}
	return nil
}

// ZarrChunk returns chunk idx of the synthetic array Zarr writes in
// a's shape and chunking (tests compare what they read with it).
func ZarrChunk(a *zarr.Array, idx []int) (rechunk.Chunk, error) {
	m := a.Meta()
	shape, err := a.ChunkShape(idx)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	c := rechunk.Chunk{DType: m.DType, Shape: shape, Data: make([]byte, elems(shape)*int64(m.DType.ItemSize()))}
	fillValues(c, m.Shape, chunkStart(a.ChunkSizes(), idx))
	return c, nil
}

func elems(shape []int64) int64 {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	return n
}

func chunkStart(sizes [][]int64, idx []int) []int64 {
	start := make([]int64, len(idx))
	for a, i := range idx {
		for _, s := range sizes[a][:i] {
			start[a] += s
		}
	}
	return start
}

// fillValues writes each element's global C-order index, in the dtype.
func fillValues(c rechunk.Chunk, shape, start []int64) {
	isz := c.DType.ItemSize()
	idx := make([]int64, len(c.Shape))
	for off := 0; off < len(c.Data); off += isz {
		var g int64
		for a := range idx {
			g = g*shape[a] + start[a] + idx[a]
		}
		putNumber(c.Data[off:off+isz], c.DType, g)
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < c.Shape[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// putNumber writes v in the dtype's kind and byte order (floats and signed
// or unsigned integers; other kinds get v's low bytes).
func putNumber(b []byte, dt rechunk.DType, v int64) {
	var bits uint64
	switch {
	case dt.Kind() == 'f' && len(b) == 8:
		bits = math.Float64bits(float64(v))
	case dt.Kind() == 'f' && len(b) == 4:
		bits = uint64(math.Float32bits(float32(v)))
	default:
		bits = uint64(v)
	}
	for k := range b {
		shift := 8 * k
		if dt.ByteOrder() == '>' {
			shift = 8 * (len(b) - 1 - k)
		}
		b[k] = byte(bits >> shift)
	}
}
