package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/synth"
	"github.com/shufflenode/shufflenode/zarr"
)

// TestRechunkZarrRoundTrip writes a Zarr store with known values, rechunks
// it on an in-process cluster and reads back every element of the output.
func TestRechunkZarrRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, shape, in, out, dtype, comp string
	}{
		{"2-d zlib rows to columns", "60,50", "7,50", "60,9", "<f8", "zlib"},
		{"3-d zstd ragged", "9,8,7", "2,8,3", "9,3,7", "<i4", "zstd"},
		{"1-d uncompressed", "100", "30", "7", ">f4", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "in.zarr"), filepath.Join(dir, "out.zarr")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"gen-zarr", "--output", in, "--shape", tc.shape, "--chunks", tc.in,
				"--dtype", tc.dtype, "--compressor", tc.comp}, &stdout, &stderr); code != 0 {
				t.Fatalf("gen-zarr: %d %s", code, stderr.String())
			}
			if code := run([]string{"rechunk", "--input", in, "--output", out, "--chunks", tc.out, "--nodes", "3"},
				&stdout, &stderr); code != 0 {
				t.Fatalf("rechunk: %d %s", code, stderr.String())
			}
			checkStore(t, out, tc.out)
		})
	}
}

// checkStore reads every chunk of the store and checks that element i (C
// order) holds i, and that the chunking is the requested one.
func checkStore(t *testing.T, dir, chunks string) {
	t.Helper()
	a, err := zarr.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	m := a.Meta()
	if got := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(m.Chunks)), ","), "[]"); got != chunks {
		t.Fatalf("output chunks %s, want %s", got, chunks)
	}
	grid := a.Grid()
	n := 1
	for _, g := range grid {
		n *= g
	}
	var seen int64
	for p := range n {
		idx := splitaxes.Unravel(p, grid)
		c, err := a.ReadChunk(idx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := synth.ZarrChunk(a, idx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Data, want.Data) {
			t.Fatalf("chunk %v: %s differs from the expected values (first: %v)", idx, m.DType, firstValue(c.Data, m.DType.String()))
		}
		seen += int64(len(c.Data))
	}
	if seen != job.ArrayBytes(m) {
		t.Fatalf("read %d bytes, the array has %d", seen, job.ArrayBytes(m))
	}
}

func firstValue(b []byte, dt string) any {
	if dt == "<f8" && len(b) >= 8 {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return b[:min(len(b), 8)]
}

func TestRechunkBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.zarr")
	var out, errb bytes.Buffer
	if run([]string{"gen-zarr", "--output", in, "--shape", "10,10", "--chunks", "5,5"}, &out, &errb) != 0 {
		t.Fatal(errb.String())
	}
	for _, args := range [][]string{
		{"rechunk", "--input", in, "--output", filepath.Join(dir, "o1"), "--chunks", "5"},
		{"rechunk", "--input", in, "--output", filepath.Join(dir, "o2"), "--chunks", "5,0"},
		{"rechunk", "--input", filepath.Join(dir, "missing"), "--output", filepath.Join(dir, "o3"), "--chunks", "5,5"},
		{"rechunk", "--input", in, "--chunks", "5,5"},
	} {
		errb.Reset()
		if code := run(args, &out, &errb); code != 2 || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errb.String())
		}
	}
}
