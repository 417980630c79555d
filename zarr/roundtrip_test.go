package zarr

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// storeCase is one array to write chunk by chunk and read back.
type storeCase struct {
	name          string
	dtype         string
	shape, chunks []int64
	comp          *Compressor
	sep           string
	fill          string
}

var (
	zlib1 = &Compressor{ID: CompressorZlib, Level: 1}
	zstd3 = &Compressor{ID: CompressorZstd, Level: 3}
	comps = []*Compressor{nil, zlib1, zstd3}
)

// roundTripCases covers every dtype (2-D, ragged, the compressor, separator
// and fill rotating), then 0 to 4 dims with every compressor and separator.
func roundTripCases() []storeCase {
	var cases []storeCase
	fills := []string{"", "0", "1"}
	for i, dt := range allDTypes {
		c := storeCase{dtype: dt, shape: []int64{7, 5}, chunks: []int64{3, 2},
			comp: comps[i%3], sep: []string{".", "/"}[i%2], fill: fills[i%3]}
		c.name = fmt.Sprintf("dtype=%s/comp=%s/sep=%s", dt, compName(c.comp), c.sep)
		cases = append(cases, c)
	}
	shapes := [][2][]int64{
		{{}, {}}, {{25}, {10}}, {{0}, {4}}, {{5, 7}, {2, 3}}, {{4, 6}, {4, 6}},
		{{3, 4, 5}, {2, 4, 2}}, {{3, 0, 2}, {1, 1, 1}}, {{3, 4, 2, 5}, {2, 3, 2, 2}}, {{2, 2}, {5, 5}},
	}
	for _, s := range shapes {
		for _, comp := range comps {
			for _, sep := range []string{".", "/"} {
				c := storeCase{dtype: "<f8", shape: s[0], chunks: s[1], comp: comp, sep: sep, fill: `"NaN"`}
				c.name = fmt.Sprintf("shape=%v/chunks=%v/comp=%s/sep=%s", s[0], s[1], compName(comp), sep)
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// compName names a compressor for test names.
func compName(c *Compressor) string {
	if c == nil {
		return "none"
	}
	return c.ID
}

func TestRoundTrip(t *testing.T) {
	for i, c := range roundTripCases() {
		t.Run(c.name, func(t *testing.T) { runRoundTrip(t, c, uint64(i)) })
	}
}

// runRoundTrip writes a random array chunk by chunk, reopens the store,
// reads every chunk back and checks every stored file against a padded
// chunk built element by element.
func runRoundTrip(t *testing.T, c storeCase, seed uint64) {
	dir := filepath.Join(t.TempDir(), "a.zarr")
	m := Meta{Shape: c.shape, Chunks: c.chunks, DType: mustDType(t, c.dtype), Compressor: c.comp,
		FillValue: raw(c.fill), Separator: c.sep}
	a, err := Create(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := rechunk.NumBytes(m.DType, m.Shape)
	whole := rechunk.Chunk{DType: m.DType, Shape: m.Shape, Data: randomBytes(rand.New(rand.NewPCG(seed, 1)), n)}
	writeAll(t, a, whole)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if want := m.normalized(); !reflect.DeepEqual(b.Meta(), want) {
		t.Fatalf("reopened meta %+v, want %+v", b.Meta(), want)
	}
	checkAll(t, b, whole)
}

// writeAll writes every chunk of whole into a.
func writeAll(t testing.TB, a *Array, whole rechunk.Chunk) {
	m := a.Meta()
	eachIndex(a.Grid(), func(idx []int) {
		data, shape, err := rechunk.AppendCut(nil, whole, chunkRanges(m.Shape, m.Chunks, idx))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteChunk(idx, rechunk.Chunk{DType: m.DType, Shape: shape, Data: data}); err != nil {
			t.Fatal(err)
		}
	})
}

// checkAll reads every chunk of a and compares it with whole, and every
// stored file with the reference padded chunk.
func checkAll(t *testing.T, a *Array, whole rechunk.Chunk) {
	m := a.Meta()
	fill, err := FillBytes(m.DType, m.FillValue)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	eachIndex(a.Grid(), func(idx []int) {
		count++
		want, shape, _ := rechunk.AppendCut(nil, whole, chunkRanges(m.Shape, m.Chunks, idx))
		got, err := a.ReadChunk(idx)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType != m.DType || !slices.Equal(got.Shape, shape) || !bytes.Equal(got.Data, want) {
			t.Fatalf("chunk %v: got %s%v, want %s%v (bytes equal: %v)", idx, got.DType, got.Shape, m.DType, shape, bytes.Equal(got.Data, want))
		}
		stored := rawDecode(t, m.Compressor, readFile(t, a.chunkPath(idx)))
		if !bytes.Equal(stored, refPadded(whole.Data, m.Shape, m.Chunks, idx, fill)) {
			t.Fatalf("chunk %v: stored bytes differ from the padded reference", idx)
		}
	})
	if want := gridCount(a.Grid()); count != want {
		t.Fatalf("visited %d chunks, want %d", count, want)
	}
}

// gridCount returns the number of chunks of a grid.
func gridCount(grid []int) int {
	n := 1
	for _, g := range grid {
		n *= g
	}
	return n
}

func TestChunkSizesPlanWithSplitaxes(t *testing.T) {
	cases := []struct {
		name          string
		shape, chunks []int64
		want          [][]int64
	}{
		{"ragged", []int64{25}, []int64{10}, [][]int64{{10, 10, 5}}},
		{"exact", []int64{20, 3}, []int64{10, 3}, [][]int64{{10, 10}, {3}}},
		{"chunk larger than axis", []int64{2}, []int64{5}, [][]int64{{2}}},
		{"empty axis", []int64{0, 4}, []int64{3, 3}, [][]int64{{}, {3, 1}}},
		{"zero-dim", []int64{}, []int64{}, [][]int64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := Create(filepath.Join(t.TempDir(), "a"), Meta{Shape: c.shape, Chunks: c.chunks, DType: mustDType(t, "|u1")})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if got := a.ChunkSizes(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ChunkSizes = %v, want %v", got, c.want)
			}
			if _, err := splitaxes.New(a.ChunkSizes(), a.ChunkSizes()); err != nil {
				t.Fatalf("splitaxes refuses ChunkSizes: %v", err)
			}
			for d, sizes := range a.ChunkSizes() {
				if len(sizes) != a.Grid()[d] {
					t.Fatalf("axis %d: %d sizes, grid %d", d, len(sizes), a.Grid()[d])
				}
			}
		})
	}
}

// TestConcurrentChunks writes the chunks of one array from several
// goroutines, then reads them all back from several goroutines at once,
// with every compressor (pooled zlib state, shared zstd codec).
func TestConcurrentChunks(t *testing.T) {
	for _, comp := range comps {
		t.Run(compName(comp), func(t *testing.T) {
			m := Meta{Shape: []int64{23, 17}, Chunks: []int64{4, 5}, DType: mustDType(t, ">f4"), Compressor: comp, FillValue: raw("1.5")}
			a, err := Create(filepath.Join(t.TempDir(), "a"), m)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			n, _ := rechunk.NumBytes(m.DType, m.Shape)
			whole := rechunk.Chunk{DType: m.DType, Shape: m.Shape, Data: randomBytes(rand.New(rand.NewPCG(3, 4)), n)}
			var idxs [][]int
			eachIndex(a.Grid(), func(idx []int) { idxs = append(idxs, slices.Clone(idx)) })
			runWorkers(t, 4, idxs, func(idx []int) error {
				data, shape, _ := rechunk.AppendCut(nil, whole, chunkRanges(m.Shape, m.Chunks, idx))
				return a.WriteChunk(idx, rechunk.Chunk{DType: m.DType, Shape: shape, Data: data})
			})
			runWorkers(t, 4, idxs, func(idx []int) error {
				want, _, _ := rechunk.AppendCut(nil, whole, chunkRanges(m.Shape, m.Chunks, idx))
				got, err := a.ReadChunk(idx)
				if err == nil && !bytes.Equal(got.Data, want) {
					err = fmt.Errorf("chunk %v reads differently", idx)
				}
				return err
			})
		})
	}
}

// runWorkers runs fn on every index from the given number of goroutines.
func runWorkers(t *testing.T, workers int, idxs [][]int, fn func([]int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, len(idxs))
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(idxs); k += workers {
				errs <- fn(idxs[k])
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
