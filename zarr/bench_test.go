package zarr

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

// benchChunks returns the 100 chunks of a (2000, 2000) "<f8" array with
// chunks (200, 200), holding a smooth field rounded to 1/1024 (compressible
// the way measured data is, not like random bytes).
func benchChunks(b *testing.B) []rechunk.Chunk {
	dt := mustDType(b, "<f8")
	out := make([]rechunk.Chunk, 0, 100)
	for ci := range 10 {
		for cj := range 10 {
			data := make([]byte, 200*200*8)
			for e := range 200 * 200 {
				i, j := float64(ci*200+e/200), float64(cj*200+e%200)
				v := math.Round(1024*(math.Sin(i/97)*math.Cos(j/61)+i/2000)) / 1024
				binary.LittleEndian.PutUint64(data[8*e:], math.Float64bits(v))
			}
			out = append(out, rechunk.Chunk{DType: dt, Shape: []int64{200, 200}, Data: data})
		}
	}
	return out
}

// BenchmarkStore writes and reads a (2000, 2000) "<f8" store with chunks
// (200, 200): 32 MB of array per operation, with no compressor, zlib level
// 1 and zstd level 1. Reports the stored size as a ratio of the raw size.
func BenchmarkStore(b *testing.B) {
	chunks := benchChunks(b)
	cases := []struct {
		name string
		comp *Compressor
	}{{"none", nil}, {"zlib1", &Compressor{ID: CompressorZlib, Level: 1}}, {"zstd1", &Compressor{ID: CompressorZstd, Level: 1}}}
	for _, c := range cases {
		m := Meta{Shape: []int64{2000, 2000}, Chunks: []int64{200, 200}, DType: chunks[0].DType, Compressor: c.comp}
		b.Run(c.name+"/write", func(b *testing.B) { benchWrite(b, m, chunks, 1) })
		b.Run(c.name+"/write4", func(b *testing.B) { benchWrite(b, m, chunks, 4) })
		b.Run(c.name+"/read", func(b *testing.B) { benchRead(b, m, chunks) })
	}
}

// benchWrite writes every chunk into a fresh store per iteration, from
// the given number of goroutines (their fsyncs overlap).
func benchWrite(b *testing.B, m Meta, chunks []rechunk.Chunk, writers int) {
	b.ReportAllocs()
	b.SetBytes(2000 * 2000 * 8)
	var a *Array
	for i := 0; b.Loop(); i++ {
		var err error
		if a, err = Create(filepath.Join(b.TempDir(), "a"), m); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() { writeChunks(b, a, chunks, w, writers) })
		}
		wg.Wait()
		a.Close()
	}
	b.ReportMetric(storedRatio(b, a), "stored/raw")
}

// benchRead reads every chunk of a store written once.
func benchRead(b *testing.B, m Meta, chunks []rechunk.Chunk) {
	a, err := Create(filepath.Join(b.TempDir(), "a"), m)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	writeChunks(b, a, chunks, 0, 1)
	b.ReportAllocs()
	b.SetBytes(2000 * 2000 * 8)
	for b.Loop() {
		for k := range chunks {
			if _, err := a.ReadChunk([]int{k / 10, k % 10}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// writeChunks writes the 10x10 chunks k = first, first+step, ... in C
// order.
func writeChunks(b *testing.B, a *Array, chunks []rechunk.Chunk, first, step int) {
	for k := first; k < len(chunks); k += step {
		if err := a.WriteChunk([]int{k / 10, k % 10}, chunks[k]); err != nil {
			b.Error(err)
			return
		}
	}
}

// storedRatio returns the bytes of a's chunk files over the raw bytes.
func storedRatio(b *testing.B, a *Array) float64 {
	var n int64
	for k := range 100 {
		st, err := os.Stat(a.chunkPath([]int{k / 10, k % 10}))
		if err != nil {
			b.Fatal(err)
		}
		n += st.Size()
	}
	return float64(n) / (2000 * 2000 * 8)
}
