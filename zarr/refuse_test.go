package zarr

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/shufflenode/shufflenode/rechunk"
)

// zarray returns a valid .zarray document with one key replaced (or removed
// when value is "").
func zarray(key, value string) string {
	kv := map[string]string{
		"zarr_format": "2", "shape": "[3, 4]", "chunks": "[2, 3]", "dtype": `"<i4"`,
		"compressor": "null", "fill_value": "0", "order": `"C"`, "filters": "null",
	}
	kv[key] = value
	var parts []string
	for _, k := range []string{"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters", "dimension_separator"} {
		if kv[k] != "" {
			parts = append(parts, `"`+k+`": `+kv[k])
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func TestMetaRefused(t *testing.T) {
	cases := []struct {
		name, key, value string
		want             error
		mention          string
	}{
		{"blosc", "compressor", `{"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}`, ErrCompressor, "blosc"},
		{"gzip", "compressor", `{"id": "gzip", "level": 1}`, ErrCompressor, "gzip"},
		{"compressor without id", "compressor", `{"level": 1}`, ErrCompressor, ""},
		{"compressor not object", "compressor", `"zlib"`, ErrCompressor, ""},
		{"zlib level", "compressor", `{"id": "zlib", "level": 10}`, ErrCompressor, "zlib"},
		{"zstd level", "compressor", `{"id": "zstd", "level": 23}`, ErrCompressor, "zstd"},
		{"order F", "order", `"F"`, ErrOrder, `"F"`},
		{"filters", "filters", `[{"id": "delta", "dtype": "<i4"}]`, ErrFilters, "delta"},
		{"filters not list", "filters", `{"id": "delta"}`, ErrFilters, ""},
		{"half float", "dtype", `"<f2"`, ErrDType, "<f2"},
		{"string dtype", "dtype", `"|S10"`, ErrDType, "S10"},
		{"native order", "dtype", `"=f8"`, ErrDType, ""},
		{"structured dtype", "dtype", `[["a", "<f8"]]`, ErrDType, ""},
		{"zarr v3", "zarr_format", "3", ErrMeta, "zarr_format"},
		{"no zarr_format", "zarr_format", "", ErrMeta, "zarr_format"},
		{"no shape", "shape", "", ErrMeta, "shape"},
		{"chunks length", "chunks", "[2]", ErrMeta, "chunks"},
		{"zero chunk", "chunks", "[0, 3]", ErrMeta, "chunks"},
		{"negative shape", "shape", "[-1, 4]", ErrMeta, "shape"},
		{"fractional shape", "shape", "[2.5, 4]", ErrMeta, ""},
		{"separator", "dimension_separator", `"-"`, ErrMeta, "-"},
		{"empty separator", "dimension_separator", `""`, ErrMeta, ""},
		{"fill out of range", "fill_value", "1e10", ErrFillValue, "1e10"},
		{"chunk too large", "chunks", "[100000, 100000]", ErrTooLarge, ""},
		{"too many chunks", "shape", "[100000000000, 4]", ErrTooLarge, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, metaFile), []byte(zarray(c.key, c.value)), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q does not mention %q and the store", err, c.mention)
			}
		})
	}
}

func TestMetaAccepted(t *testing.T) {
	cases := []struct{ name, key, value string }{
		{"empty filters", "filters", "[]"},
		{"no filters", "filters", ""},
		{"no order", "order", ""},
		{"no compressor", "compressor", ""},
		{"no fill", "fill_value", ""},
		{"zstd checksum", "compressor", `{"id": "zstd", "level": 3, "checksum": true}`},
		{"zlib default level", "compressor", `{"id": "zlib"}`},
		{"little-endian u1", "dtype", `"<u1"`},
		{"slash separator", "dimension_separator", `"/"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := decodeMeta([]byte(zarray(c.key, c.value))); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestOpenMissing(t *testing.T) {
	if _, err := Open(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestCreateRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := Meta{Shape: []int64{4}, Chunks: []int64{2}, DType: mustDType(t, "<f8")}
	if _, err := Create(dir, m); !errors.Is(err, ErrExists) {
		t.Fatalf("non-empty dir: err = %v, want ErrExists", err)
	}
	bad := m
	bad.Compressor = &Compressor{ID: "blosc"}
	if _, err := Create(filepath.Join(dir, "new"), bad); !errors.Is(err, ErrCompressor) || !strings.Contains(err.Error(), "blosc") {
		t.Fatalf("blosc: err = %v, want ErrCompressor naming blosc", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("invalid meta created the store: %v", err)
	}
}

// newTestArray creates a 5x3 "<i4" array with chunks 4x2 (grid 2x2, edge
// chunks trimmed) and the given compressor.
func newTestArray(t testing.TB, comp *Compressor) *Array {
	t.Helper()
	a, err := Create(filepath.Join(t.TempDir(), "a"), Meta{Shape: []int64{5, 3}, Chunks: []int64{4, 2},
		DType: mustDType(t, "<i4"), Compressor: comp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestWriteChunkRefused(t *testing.T) {
	a := newTestArray(t, nil)
	i4, f8 := mustDType(t, "<i4"), mustDType(t, "<f8")
	cases := []struct {
		name string
		idx  []int
		c    rechunk.Chunk
		want error
	}{
		{"index out of grid", []int{2, 0}, rechunk.Chunk{DType: i4, Shape: []int64{4, 2}, Data: make([]byte, 32)}, ErrIndex},
		{"negative index", []int{0, -1}, rechunk.Chunk{DType: i4, Shape: []int64{4, 2}, Data: make([]byte, 32)}, ErrIndex},
		{"wrong ndim", []int{0}, rechunk.Chunk{DType: i4, Shape: []int64{4, 2}, Data: make([]byte, 32)}, ErrIndex},
		{"wrong dtype", []int{0, 0}, rechunk.Chunk{DType: f8, Shape: []int64{4, 2}, Data: make([]byte, 64)}, ErrChunk},
		{"untrimmed edge", []int{1, 1}, rechunk.Chunk{DType: i4, Shape: []int64{4, 2}, Data: make([]byte, 32)}, ErrChunk},
		{"short data", []int{1, 1}, rechunk.Chunk{DType: i4, Shape: []int64{1, 1}, Data: make([]byte, 3)}, ErrChunk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := a.WriteChunk(c.idx, c.c)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), a.Dir()) {
				t.Fatalf("err = %v, want %v naming the store", err, c.want)
			}
		})
	}
	if _, err := a.ReadChunk([]int{0, 2}); !errors.Is(err, ErrIndex) {
		t.Fatalf("ReadChunk out of grid: err = %v", err)
	}
}

func TestClosed(t *testing.T) {
	a := newTestArray(t, zstd3)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := a.ReadChunk([]int{0, 0}); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadChunk after Close: %v", err)
	}
	c := rechunk.Chunk{DType: a.meta.DType, Shape: []int64{4, 2}, Data: make([]byte, 32)}
	if err := a.WriteChunk([]int{0, 0}, c); !errors.Is(err, ErrClosed) {
		t.Fatalf("WriteChunk after Close: %v", err)
	}
}

// zlibBytes and zstdBytes compress b with the standard encoders.
func zlibBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(b []byte) []byte {
	e, _ := zstd.NewWriter(nil)
	defer e.Close()
	return e.EncodeAll(b, nil)
}

func TestCorruptChunks(t *testing.T) {
	full := bytes.Repeat([]byte{1, 0, 0, 0}, 8) // chunk 4x2 of <i4: 32 bytes
	cases := []struct {
		name   string
		comp   *Compressor
		stored []byte
	}{
		{"raw short", nil, full[:31]},
		{"raw long", nil, append(full, 0)},
		{"raw empty", nil, nil},
		{"zlib truncated", zlib1, zlibBytes(full)[:10]},
		{"zlib short", zlib1, zlibBytes(full[:28])},
		{"zlib long", zlib1, zlibBytes(append(full, 0))},
		{"zlib bad checksum", zlib1, flipLast(zlibBytes(full))},
		{"zlib garbage", zlib1, []byte("not a zlib stream at all")},
		{"zlib empty", zlib1, nil},
		{"zstd truncated", zstd3, zstdBytes(full)[:8]},
		{"zstd short", zstd3, zstdBytes(full[:28])},
		{"zstd long", zstd3, zstdBytes(append(full, 0))},
		{"zstd garbage", zstd3, []byte("not a zstd frame at all")},
		{"zstd empty", zstd3, nil},
		{"zlib in zstd store", zstd3, zlibBytes(full)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newTestArray(t, c.comp)
			if err := writeAtomic(a.chunkPath([]int{0, 0}), c.stored, true); err != nil {
				t.Fatal(err)
			}
			_, err := a.ReadChunk([]int{0, 0})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), a.Dir()) || !strings.Contains(err.Error(), "[0 0]") {
				t.Fatalf("err = %v, want ErrCorrupt naming the store and chunk", err)
			}
		})
	}
}

// flipLast returns b with its last byte changed.
func flipLast(b []byte) []byte {
	b[len(b)-1] ^= 0xff
	return b
}

// TestZipBombBounded stores a chunk that decompresses to 64 MiB (but is
// small enough to pass the stored-size bound) in an array whose chunks are
// 1 MiB, and checks that reading it fails having allocated far less than
// the bomb's size.
func TestZipBombBounded(t *testing.T) {
	bomb := make([]byte, 64<<20)
	for _, c := range []struct {
		name   string
		comp   *Compressor
		stored []byte
	}{{"zlib", zlib1, zlibBytes(bomb)}, {"zstd", zstd3, zstdBytes(bomb)}} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Create(filepath.Join(t.TempDir(), "a"), Meta{Shape: []int64{1024, 256}, Chunks: []int64{1024, 256},
				DType: mustDType(t, "<i4"), Compressor: c.comp})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if len(c.stored) > a.codec.maxEncoded(a.fullBytes) {
				t.Fatalf("bomb of %d bytes is refused before decoding", len(c.stored))
			}
			if err := writeAtomic(a.chunkPath([]int{0, 0}), c.stored, true); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = a.ReadChunk([]int{0, 0})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "over") {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Fatalf("reading the bomb allocated %d bytes", alloc)
			}
		})
	}
}
