package job

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// ArrayConfig is a synthetic array rechunk.
type ArrayConfig struct {
	ID    string
	DType string // NumPy dtype, default "<f8"
	// Old and New are the chunkings in the spec (null/Unknown allowed where
	// splitaxes allows it); Actual are the real old chunk sizes when Old has
	// unknown ones (default Old).
	Old, New, Actual spec.Chunks
	Parallel         int
	Auth             flightproto.ClientAuth // the nodes' API TLS settings and token
	BeforeInput      func(task int)
	// BeforeRead, if set, is called before new chunk p is read.
	BeforeRead func(p int)
	Progress   func(phase string, done, total int)
}

// ArrayReport is what an array demo measured.
type ArrayReport struct {
	Bytes          int64
	OldChunks      int
	NewChunks      int
	Replayed       int64
	Epoch          uint64
	ShuffleSeconds float64
	ReadSeconds    float64
	TotalSeconds   float64
}

// MBps is array bytes over the whole run, in 10^6 bytes per second.
func (r ArrayReport) MBps() float64 { return float64(r.Bytes) / 1e6 / r.TotalSeconds }

// RunArrayDemo rechunks a synthetic array on the cluster at nodes, reads
// every new chunk back, checks every element against the value its global
// index implies, checks the layout export, and closes the shuffle.
func RunArrayDemo(ctx context.Context, nodes []string, c ArrayConfig) (ArrayReport, error) {
	if c.DType == "" {
		c.DType = "<f8"
	}
	if c.Actual == nil {
		c.Actual = c.Old
	}
	dt, err := rechunk.ParseDType(c.DType)
	if err != nil {
		return ArrayReport{}, err
	}
	g := newArrayGen(dt, c.Actual)
	sp := spec.ArraySpec(cmpOr(c.ID, "array-demo"), c.DType, c.Old, c.New)
	rep := ArrayReport{OldChunks: sp.Tasks, NewChunks: sp.Partitions, Bytes: g.total() * int64(dt.ItemSize())}
	start := time.Now()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: nodes, Parallel: c.Parallel, Auth: c.Auth,
		Input: func(t int) ([]arrow.Record, error) {
			if c.BeforeInput != nil {
				c.BeforeInput(t)
			}
			return []arrow.Record{api.ChunkRecord(g.oldChunk(t))}, nil
		},
		Progress: progress(c.Progress, "put")})
	if err != nil {
		return rep, err
	}
	defer res.Close(context.WithoutCancel(ctx))
	rep.ShuffleSeconds = time.Since(start).Seconds()
	readStart := time.Now()
	err = verifyChunks(ctx, res, g, sp, c)
	rep.Replayed, rep.Epoch = res.Replayed(), res.Epoch // reads may recover a loss
	if err != nil {
		return rep, err
	}
	rep.ReadSeconds = time.Since(readStart).Seconds()
	rep.TotalSeconds = time.Since(start).Seconds()
	return rep, checkLayout(ctx, res, sp)
}

// verifyChunks reads every new chunk and compares it with the generator.
func verifyChunks(ctx context.Context, res *client.Result, g *arrayGen, sp *spec.Spec, c ArrayConfig) error {
	report := progress(c.Progress, "read")
	newSizes := g.actualNew(sp.NewChunks)
	for p := range sp.Partitions {
		if c.BeforeRead != nil {
			c.BeforeRead(p)
		}
		got, err := res.ReadChunk(ctx, p)
		if err != nil {
			return fmt.Errorf("job: reading new chunk %d: %w", p, err)
		}
		if err := g.check(got, newSizes, p); err != nil {
			return fmt.Errorf("job: new chunk %d: %w", p, err)
		}
		report(p+1, sp.Partitions)
	}
	return nil
}

// checkLayout checks the __partitioned__ export against the new chunking.
func checkLayout(ctx context.Context, res *client.Result, sp *spec.Spec) error {
	l, err := res.Layout(ctx)
	if err != nil {
		return err
	}
	grid := sp.NewChunks.Grid()
	if fmt.Sprint(l.Tiling) != fmt.Sprint(grid) || len(l.Partitions) != sp.Partitions {
		return fmt.Errorf("job: layout tiling %v with %d partitions, want %v with %d", l.Tiling, len(l.Partitions), grid, sp.Partitions)
	}
	for key, p := range l.Partitions {
		if p.Data.Shuffle != sp.ID || p.Data.Partition < 0 || p.Data.Partition >= sp.Partitions || len(p.Location) != 2 {
			return fmt.Errorf("job: layout partition %s: %+v", key, p)
		}
	}
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// arrayGen makes and checks a synthetic array: the bytes of the element at
// global C-order index i are a hash of i, so any dtype can be verified.
type arrayGen struct {
	dt     rechunk.DType
	chunks [][]int64 // actual old chunk sizes
	shape  []int64
}

func newArrayGen(dt rechunk.DType, actual spec.Chunks) *arrayGen {
	g := &arrayGen{dt: dt, chunks: actual, shape: make([]int64, len(actual))}
	for a, axis := range actual {
		for _, n := range axis {
			g.shape[a] += n
		}
	}
	return g
}

func (g *arrayGen) total() int64 {
	n := int64(1)
	for _, s := range g.shape {
		n *= s
	}
	return n
}

// actualNew resolves unknown new sizes (only on unchanged axes) from the
// actual old ones.
func (g *arrayGen) actualNew(nc spec.Chunks) [][]int64 {
	out := make([][]int64, len(nc))
	for a, axis := range nc {
		out[a] = append([]int64(nil), axis...)
		for i, n := range axis {
			if n == splitaxes.Unknown {
				out[a][i] = g.chunks[a][i]
			}
		}
	}
	return out
}

// oldChunk generates old chunk t.
func (g *arrayGen) oldChunk(t int) rechunk.Chunk {
	return g.fill(g.chunks, t)
}

// fill generates chunk t of the chunking sizes.
func (g *arrayGen) fill(sizes [][]int64, t int) rechunk.Chunk {
	start, shape := chunkBox(sizes, t)
	c := rechunk.Chunk{DType: g.dt, Shape: shape}
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	isz := int64(g.dt.ItemSize())
	c.Data = make([]byte, n*isz)
	g.rows(start, shape, func(off, global, count int64) {
		for i := range count {
			g.put(c.Data[off+i*isz:], global+i)
		}
	})
	return c
}

// check compares chunk p of the chunking sizes with what it must hold.
func (g *arrayGen) check(got rechunk.Chunk, sizes [][]int64, p int) error {
	want := g.fill(sizes, p)
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || got.DType != want.DType {
		return fmt.Errorf("dtype %s shape %v, want %s %v", got.DType, got.Shape, want.DType, want.Shape)
	}
	if len(got.Data) != len(want.Data) {
		return fmt.Errorf("%d bytes, want %d", len(got.Data), len(want.Data))
	}
	if bytes.Equal(got.Data, want.Data) {
		return nil
	}
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			return fmt.Errorf("byte %d (element %d) differs", i, i/g.dt.ItemSize())
		}
	}
	return nil
}

// rows calls fn for every row of the box (start, shape) along its last
// axis: the row's byte offset in the box, the global C-order index of its
// first element, and its element count (consecutive global indexes).
func (g *arrayGen) rows(start, shape []int64, fn func(off, global, count int64)) {
	nd := len(shape)
	if nd == 0 {
		fn(0, 0, 1)
		return
	}
	for _, s := range shape {
		if s == 0 {
			return
		}
	}
	idx := make([]int64, nd)
	row := shape[nd-1] * int64(g.dt.ItemSize())
	for off := int64(0); ; off += row {
		var global int64
		for a := range nd {
			global = global*g.shape[a] + start[a] + idx[a]
		}
		fn(off, global, shape[nd-1])
		if !nextRow(idx, shape) {
			return
		}
	}
}

// nextRow advances idx (the last axis stays 0) to the next row of shape in
// C order; false when there is none.
func nextRow(idx, shape []int64) bool {
	for a := len(shape) - 2; a >= 0; a-- {
		if idx[a]++; idx[a] < shape[a] {
			return true
		}
		idx[a] = 0
	}
	return false
}

// put writes the item bytes of element global: little-endian words of a
// hash chain, eight bytes a step, cut to the item size.
func (g *arrayGen) put(b []byte, global int64) {
	h := uint64(global)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	isz := g.dt.ItemSize()
	if isz == 8 {
		binary.LittleEndian.PutUint64(b, h)
		return
	}
	for k := 0; k < isz; k += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], h)
		copy(b[k:isz], w[:])
		h = h*0xbf58476d1ce4e5b9 + 1
	}
}

// chunkBox returns the start and shape of chunk t (C-order index) of sizes.
func chunkBox(sizes [][]int64, t int) (start, shape []int64) {
	nd := len(sizes)
	start, shape = make([]int64, nd), make([]int64, nd)
	for a := nd - 1; a >= 0; a-- {
		n := len(sizes[a])
		i := 0
		if n > 0 {
			i, t = t%n, t/n
		}
		for _, s := range sizes[a][:i] {
			start[a] += s
		}
		if n > 0 {
			shape[a] = sizes[a][i]
		}
	}
	return start, shape
}
