package job

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
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
	PutBatch         int                    // old chunks per put stream (client.Job.PutBatch)
	ReadParallel     int                    // concurrent chunk reads (default 2 per node)
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
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: nodes, Parallel: c.Parallel, PutBatch: c.PutBatch, Auth: c.Auth,
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
	err = verifyChunks(ctx, res, g, sp, c, len(nodes))
	rep.Replayed, rep.Epoch = res.Replayed(), res.Epoch // reads may recover a loss
	if err != nil {
		return rep, err
	}
	rep.ReadSeconds = time.Since(readStart).Seconds()
	rep.TotalSeconds = time.Since(start).Seconds()
	return rep, checkLayout(ctx, res, sp)
}

// verifyChunks reads every new chunk, a group of one owner's chunks per
// DoGet (client.Result.VisitChunks), a few groups at a time (2 per node
// unless c.ReadParallel says otherwise), and compares each with the
// generator. A DoGet per chunk cost the nodes, at 10,000 new chunks of
// 80 kB, as much as the reads' bytes.
func verifyChunks(ctx context.Context, res *client.Result, g *arrayGen, sp *spec.Spec, c ArrayConfig, nodes int) error {
	report := progress(c.Progress, "read")
	newSizes := g.actualNew(sp.NewChunks)
	par := c.ReadParallel
	if par <= 0 {
		par = 2 * nodes
	}
	groups := ownerGroups(res, sp.Partitions, par)
	var done atomic.Int64
	return forEachPartition(ctx, len(groups), par, func(ctx context.Context, i int) error {
		if c.BeforeRead != nil {
			for _, p := range groups[i] {
				c.BeforeRead(p)
			}
		}
		err := res.VisitChunks(ctx, groups[i], func(p int, got rechunk.Chunk) error {
			if err := g.check(got, newSizes, p); err != nil {
				return fmt.Errorf("new chunk %d: %w", p, err)
			}
			report(int(done.Add(1)), sp.Partitions)
			return nil
		})
		if err != nil {
			return fmt.Errorf("job: reading new chunks %d..%d (%d of them): %w", groups[i][0], groups[i][len(groups[i])-1], len(groups[i]), err)
		}
		return nil
	}, func(int) {})
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

func (g *arrayGen) total() int64 { return product(g.shape) }

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
	isz := int64(g.dt.ItemSize())
	c.Data = make([]byte, product(shape)*isz)
	g.rows(start, shape, func(off, global, count int64) {
		if isz == 8 {
			putRow8(c.Data[off:off+count*8], global)
			return
		}
		for i := range count {
			g.put(c.Data[off+i*isz:], global+i)
		}
	})
	return c
}

// putRow8 fills b with the 8-byte elements from global index global on:
// consecutive indexes' hashes differ by hashStep, so a row is one add per
// element.
func putRow8(b []byte, global int64) {
	h := hashIndex(global)
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], h)
		h += hashStep
	}
}

// row8Differs returns the first element of b (8-byte elements from global
// index global on) that putRow8 would not have written, or -1.
func row8Differs(b []byte, global int64) int64 {
	h := hashIndex(global)
	for i := 0; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:]) != h {
			return int64(i / 8)
		}
		h += hashStep
	}
	return -1
}

// check compares chunk p of the chunking sizes with what it must hold,
// element by element in place (no copy of the expected chunk is made).
func (g *arrayGen) check(got rechunk.Chunk, sizes [][]int64, p int) error {
	start, shape := chunkBox(sizes, p)
	if fmt.Sprint(got.Shape) != fmt.Sprint(shape) || got.DType != g.dt {
		return fmt.Errorf("dtype %s shape %v, want %s %v", got.DType, got.Shape, g.dt, shape)
	}
	isz := int64(g.dt.ItemSize())
	if n := product(shape) * isz; int64(len(got.Data)) != n {
		return fmt.Errorf("%d bytes, want %d", len(got.Data), n)
	}
	bad := int64(-1)
	g.rows(start, shape, func(off, global, count int64) {
		if isz == 8 && bad < 0 {
			if i := row8Differs(got.Data[off:off+count*8], global); i >= 0 {
				bad = off/8 + i
			}
			return
		}
		for i := int64(0); i < count && bad < 0; i++ {
			if !g.holds(got.Data[off+i*isz:], global+i) {
				bad = off/isz + i
			}
		}
	})
	if bad >= 0 {
		return fmt.Errorf("element %d (byte %d) differs", bad, bad*isz)
	}
	return nil
}

// holds reports whether b starts with the bytes put writes for global
// (8-byte elements are checked a row at a time: row8Differs).
func (g *arrayGen) holds(b []byte, global int64) bool {
	want := make([]byte, g.dt.ItemSize())
	g.put(want, global)
	return bytes.Equal(b[:len(want)], want)
}

// product is the number of elements of shape.
func product(shape []int64) int64 {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	return n
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
	h := hashIndex(global)
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

// hashIndex is the first 8 bytes of the element at global index i.
func hashIndex(i int64) uint64 { return uint64(i)*hashStep + 0x632be59bd9b4e019 }

// hashStep is what hashIndex adds per index.
const hashStep = 0x9e3779b97f4a7c15

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
