package zarr

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

// The golden stores in testdata were written by testdata/make_golden.py
// (Python's struct and zlib, the zstd tool), not by this package: a 3x4
// int32 array, a[i][j] = 4i+j+1, chunks 2x3, fill_value 42.

// goldenWant is the 3x4 array each golden store holds, row by row.
var goldenWant = [3][4]int32{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}

func TestGoldenStores(t *testing.T) {
	cases := []struct {
		name    string
		order   binary.ByteOrder
		comp    *Compressor
		sep     string
		missing [2]int // element read as fill because its chunk is missing
	}{
		{"i4_none.zarr", binary.LittleEndian, nil, ".", [2]int{-1, -1}},
		{"i4_zlib.zarr", binary.LittleEndian, &Compressor{ID: "zlib", Level: 1}, ".", [2]int{2, 3}},
		{"i4_zstd.zarr", binary.BigEndian, &Compressor{ID: "zstd", Level: 1}, "/", [2]int{-1, -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Open(filepath.Join("testdata", c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			checkGoldenMeta(t, a.Meta(), c.comp, c.sep)
			got := readGolden(t, a, c.order)
			for i := range 3 {
				for j := range 4 {
					want := goldenWant[i][j]
					if [2]int{i, j} == c.missing {
						want = 42
					}
					if got[i][j] != want {
						t.Errorf("a[%d][%d] = %d, want %d", i, j, got[i][j], want)
					}
				}
			}
		})
	}
}

// checkGoldenMeta checks the metadata every golden store shares.
func checkGoldenMeta(t *testing.T, m Meta, comp *Compressor, sep string) {
	t.Helper()
	if !reflect.DeepEqual(m.Shape, []int64{3, 4}) || !reflect.DeepEqual(m.Chunks, []int64{2, 3}) ||
		string(m.FillValue) != "42" || m.Separator != sep || !reflect.DeepEqual(m.Compressor, comp) {
		t.Fatalf("meta %+v", m)
	}
}

// readGolden reads the four chunks of a golden store into a 3x4 array,
// checking each chunk's trimmed shape.
func readGolden(t *testing.T, a *Array, order binary.ByteOrder) [3][4]int32 {
	var out [3][4]int32
	shapes := map[[2]int][]int64{{0, 0}: {2, 3}, {0, 1}: {2, 1}, {1, 0}: {1, 3}, {1, 1}: {1, 1}}
	for idx, shape := range shapes {
		c, err := a.ReadChunk(idx[:])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Shape, shape) || len(c.Data) != 4*int(shape[0]*shape[1]) {
			t.Fatalf("chunk %v: shape %v, %d bytes", idx, c.Shape, len(c.Data))
		}
		for e := range int(shape[0] * shape[1]) {
			i, j := idx[0]*2+e/int(shape[1]), idx[1]*3+e%int(shape[1])
			out[i][j] = int32(order.Uint32(c.Data[4*e:]))
		}
	}
	return out
}

// TestGoldenWriteMatches writes the golden array with this package and
// compares the .zarray and raw chunk files byte for byte with the golden
// store (and the zlib and zstd chunks after decompression).
func TestGoldenWriteMatches(t *testing.T) {
	for _, name := range []string{"i4_none.zarr", "i4_zlib.zarr", "i4_zstd.zarr"} {
		t.Run(name, func(t *testing.T) {
			src, err := Open(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			dir := filepath.Join(t.TempDir(), name)
			dst, err := Create(dir, src.Meta())
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()
			eachIndex(src.Grid(), func(idx []int) { copyChunk(t, src, dst, idx) })
			golden := readFile(t, filepath.Join("testdata", name, metaFile))
			if got := readFile(t, filepath.Join(dir, metaFile)); !bytes.Equal(got, golden) {
				t.Fatalf(".zarray differs:\n%s\nwant\n%s", got, golden)
			}
			eachIndex(src.Grid(), func(idx []int) { compareStored(t, src, dst, idx) })
		})
	}
}

// copyChunk reads chunk idx of src and writes it to dst.
func copyChunk(t *testing.T, src, dst *Array, idx []int) {
	c, err := src.ReadChunk(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.WriteChunk(idx, c); err != nil {
		t.Fatal(err)
	}
}

// compareStored compares the decompressed chunk files of two stores; a
// chunk missing from src must be, once written, all fill.
func compareStored(t *testing.T, src, dst *Array, idx []int) {
	got := rawDecode(t, dst.meta.Compressor, readFile(t, dst.chunkPath(idx)))
	stored, err := os.ReadFile(src.chunkPath(idx))
	want := bytes.Repeat(src.fill, 6)
	if err == nil {
		want = rawDecode(t, src.meta.Compressor, stored)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("chunk %v: stored % x, want % x", idx, got, want)
	}
}

// TestInteropReferenceDecoders decodes chunks this package wrote with the
// reference tools (python3's zlib, the zstd command), skipping the tools
// that are missing.
func TestInteropReferenceDecoders(t *testing.T) {
	tools := []struct {
		comp *Compressor
		cmd  []string
	}{
		{&Compressor{ID: CompressorZlib, Level: 6}, []string{"python3", "-c", "import sys,zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))"}},
		{&Compressor{ID: CompressorZstd, Level: 1}, []string{"zstd", "-d", "-q", "-c"}},
	}
	for _, tool := range tools {
		t.Run(tool.comp.ID, func(t *testing.T) {
			if _, err := exec.LookPath(tool.cmd[0]); err != nil {
				t.Skipf("%s not installed", tool.cmd[0])
			}
			a, err := Create(filepath.Join(t.TempDir(), "a"), Meta{Shape: []int64{300}, Chunks: []int64{256},
				DType: mustDType(t, "<u2"), Compressor: tool.comp, FillValue: raw("7")})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			data := make([]byte, 2*44)
			for i := range data {
				data[i] = byte(i * 3)
			}
			if err := a.WriteChunk([]int{1}, rechunk.Chunk{DType: a.meta.DType, Shape: []int64{44}, Data: data}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(tool.cmd[0], tool.cmd[1:]...)
			cmd.Stdin = bytes.NewReader(readFile(t, a.chunkPath([]int{1})))
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			want := append(data, bytes.Repeat([]byte{7, 0}, 256-44)...)
			if !bytes.Equal(out, want) {
				t.Fatalf("%s decoded %d bytes, want %d equal bytes", tool.cmd[0], len(out), len(want))
			}
		})
	}
}
