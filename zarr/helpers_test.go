package zarr

import (
	"bytes"
	"compress/zlib"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// allDTypes lists every dtype rechunk.ParseDType accepts.
var allDTypes = []string{
	"<f8", "<f4", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "|b1", "<c8", "<c16",
	">f8", ">f4", ">i8", ">i4", ">i2", ">u8", ">u4", ">u2", ">c8", ">c16",
}

// mustDType parses s or fails the test.
func mustDType(t testing.TB, s string) rechunk.DType {
	t.Helper()
	dt, err := rechunk.ParseDType(s)
	if err != nil {
		t.Fatal(err)
	}
	return dt
}

// eachIndex calls fn with every index of grid in C order (one empty index
// for a zero-dimensional grid). fn must not keep idx.
func eachIndex(grid []int, fn func(idx []int)) {
	for _, g := range grid {
		if g == 0 {
			return
		}
	}
	idx := make([]int, len(grid))
	for {
		fn(idx)
		d := len(grid) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < grid[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// chunkRanges returns the region of the array that chunk idx covers.
func chunkRanges(shape, chunks []int64, idx []int) []splitaxes.Slice {
	r := make([]splitaxes.Slice, len(idx))
	for d, i := range idx {
		start := int64(i) * chunks[d]
		r[d] = splitaxes.Slice{Start: start, Stop: min(start+chunks[d], shape[d])}
	}
	return r
}

// randomBytes returns n seeded random bytes.
func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// refPadded builds, element by element, the full chunk idx of the C-order
// array whole: the array's element where the chunk is inside the array,
// fill elsewhere.
func refPadded(whole []byte, shape, chunks []int64, idx []int, fill []byte) []byte {
	item := len(fill)
	n := int64(1)
	for _, c := range chunks {
		n *= c
	}
	out := make([]byte, 0, int(n)*item)
	local := make([]int64, len(chunks))
	for e := int64(0); e < n; e++ {
		rem, off, inside := e, int64(0), true
		for d := len(chunks) - 1; d >= 0; d-- {
			local[d] = rem % chunks[d]
			rem /= chunks[d]
		}
		for d := range chunks {
			g := int64(idx[d])*chunks[d] + local[d]
			inside = inside && g < shape[d]
			off = off*shape[d] + g
		}
		if inside {
			out = append(out, whole[int(off)*item:int(off+1)*item]...)
		} else {
			out = append(out, fill...)
		}
	}
	return out
}

// rawDecode decompresses a stored chunk with the standard decoders, not
// this package's codec.
func rawDecode(t testing.TB, comp *Compressor, stored []byte) []byte {
	t.Helper()
	if comp == nil {
		return stored
	}
	if comp.ID == CompressorZstd {
		d, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		out, err := d.DecodeAll(stored, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	r, err := zlib.NewReader(bytes.NewReader(stored))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readFile reads a file or fails the test.
func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// raw returns s as a json.RawMessage (nil for "").
func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}
