package zarr_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/zarr"
)

// Example writes a 1-d array of 25 "<i4" with chunks of 10 (the last chunk
// holds 5 elements and is padded on disk), leaves one chunk unwritten, and
// reads the store back.
func Example() {
	dir, _ := os.MkdirTemp("", "zarr-example")
	defer os.RemoveAll(dir)
	dt, _ := rechunk.ParseDType("<i4")
	m := zarr.Meta{Shape: []int64{25}, Chunks: []int64{10}, DType: dt,
		Compressor: &zarr.Compressor{ID: zarr.CompressorZstd, Level: 1}, FillValue: []byte("-1")}
	a, err := zarr.Create(filepath.Join(dir, "a.zarr"), m)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, i := range []int{0, 2} { // chunk 1 stays missing
		shape, _ := a.ChunkShape([]int{i})
		data := make([]byte, 4*shape[0])
		for e := range shape[0] {
			binary.LittleEndian.PutUint32(data[4*e:], uint32(10*i+int(e)))
		}
		if err := a.WriteChunk([]int{i}, rechunk.Chunk{DType: dt, Shape: shape, Data: data}); err != nil {
			fmt.Println(err)
		}
	}
	a.Close()

	b, _ := zarr.Open(filepath.Join(dir, "a.zarr"))
	defer b.Close()
	fmt.Println("chunk sizes:", b.ChunkSizes())
	for i := range b.Grid()[0] {
		c, _ := b.ReadChunk([]int{i})
		vals := make([]int32, c.Shape[0])
		for e := range vals {
			vals[e] = int32(binary.LittleEndian.Uint32(c.Data[4*e:]))
		}
		fmt.Println(i, vals)
	}
	// Output:
	// chunk sizes: [[10 10 5]]
	// 0 [0 1 2 3 4 5 6 7 8 9]
	// 1 [-1 -1 -1 -1 -1 -1 -1 -1 -1 -1]
	// 2 [20 21 22 23 24]
}
