package zarr

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

// FuzzReadChunk feeds arbitrary bytes to ReadChunk as a stored chunk file
// of a 5x3 "<i4" array (chunks 4x2) with each compressor. sel picks the
// compressor and the chunk (an inner one or a trimmed edge one). A read
// must never panic, and a successful one returns the trimmed shape; for raw
// chunks the bytes must be the stored ones, trimmed.
func FuzzReadChunk(f *testing.F) {
	full := make([]byte, 32)
	for i := range full {
		full[i] = byte(i)
	}
	for sel := range 6 {
		f.Add(full, uint8(sel))
	}
	f.Add(zlibBytes(full), uint8(1))
	f.Add(zlibBytes(full), uint8(4))
	f.Add(zstdBytes(full), uint8(2))
	f.Add(zstdBytes(full), uint8(5))
	f.Add(zlibBytes(full[:28]), uint8(1))
	f.Add(zstdBytes(append(full, 1)), uint8(2))
	arrays := make([]*Array, 3)
	for i, comp := range comps {
		arrays[i] = newTestArray(f, comp)
	}
	f.Fuzz(func(t *testing.T, stored []byte, sel uint8) {
		a, idx := arrays[sel%3], []int{int(sel/3) % 2, int(sel/3) % 2}
		if err := os.WriteFile(a.chunkPath(idx), stored, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := a.ReadChunk(idx)
		if err != nil {
			return
		}
		shape, _ := a.ChunkShape(idx)
		if !reflect.DeepEqual(c.Shape, shape) || c.Validate() != nil {
			t.Fatalf("chunk %v: shape %v, %d bytes", idx, c.Shape, len(c.Data))
		}
		if a.meta.Compressor == nil && !bytes.Equal(c.Data, trimTo(stored, a.meta.Chunks, shape, 4, len(c.Data))) {
			t.Fatalf("raw chunk %v reads differently from its bytes", idx)
		}
	})
}

// FuzzMeta feeds arbitrary .zarray documents to the metadata decoder. A
// document it accepts must validate, give fill bytes, and survive an
// encode-decode round trip unchanged.
func FuzzMeta(f *testing.F) {
	for _, name := range []string{"i4_none.zarr", "i4_zlib.zarr", "i4_zstd.zarr"} {
		f.Add(readFile(f, filepath.Join("testdata", name, metaFile)))
	}
	for _, kv := range [][2]string{
		{"compressor", `{"id": "blosc"}`}, {"order", `"F"`}, {"filters", `[{"id": "delta"}]`},
		{"dtype", `"<c16"`}, {"fill_value", `[1, "NaN"]`}, {"fill_value", `"-Infinity"`},
		{"shape", "[]"}, {"chunks", "[]"}, {"dimension_separator", `"/"`}, {"dtype", `"|b1"`},
	} {
		f.Add([]byte(zarray(kv[0], kv[1])))
	}
	f.Add([]byte(`{"zarr_format": 2, "shape": [], "chunks": [], "dtype": "<f8", "fill_value": "NaN"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMeta(data)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted meta does not validate: %v", err)
		}
		if _, err := FillBytes(m.DType, m.FillValue); err != nil {
			t.Fatalf("accepted fill value: %v", err)
		}
		enc, err := encodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeMeta(enc)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip: %+v, %v; want %+v\n%s", back, err, m, enc)
		}
		if _, err := rechunk.NumBytes(m.DType, m.Chunks); err != nil {
			t.Fatal(err)
		}
	})
}
