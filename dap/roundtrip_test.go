package dap

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// randomAxisDist returns one axis of a random distribution of size over
// procs processes: regular (uneven) blocks, padded even blocks, cyclic,
// block-cyclic or unstructured. output leaves out unstructured.
func randomAxisDist(r *rand.Rand, size int64, procs int, output bool) ([]int64, *splitaxes.Dist) {
	kinds := 5
	if output {
		kinds = 4
	}
	switch r.IntN(kinds) {
	case 0:
		sizes := make([]int64, procs)
		for range size {
			sizes[r.IntN(procs)]++
		}
		return sizes, nil
	case 1:
		s, d, _ := evenBlocks(size, procs, 1+r.Int64N(2), 0)
		return s, d
	case 2:
		s, d, _ := TargetAxis{DistType: "c"}.layout(size, procs, 0)
		return s, d
	case 3:
		s, d, _ := TargetAxis{DistType: "c", BlockSize: 2 + r.Int64N(3)}.layout(size, procs, 0)
		return s, d
	}
	d := &splitaxes.Dist{Type: splitaxes.Unstructured, Size: size, Indices: make([][]int64, procs)}
	for _, g := range r.Perm(int(size)) {
		p := r.IntN(procs)
		d.Indices[p] = append(d.Indices[p], int64(g))
	}
	sizes := make([]int64, procs)
	for p := range sizes {
		sizes[p] = int64(len(d.Indices[p]))
	}
	return sizes, d
}

func randomDistribution(r *rand.Rand, shape []int64, output bool) Distribution {
	d := Distribution{Shape: shape, Grid: make([]int, len(shape)), Chunks: make([][]int64, len(shape)), Dists: make([]*splitaxes.Dist, len(shape))}
	for a, n := range shape {
		d.Grid[a] = 1 + r.IntN(3)
		d.Chunks[a], d.Dists[a] = randomAxisDist(r, n, d.Grid[a], output)
	}
	return d
}

// globalsOf maps every buffer position of rank r on axis a to its global
// index (a periodic axis's ghost: the index it copies); owned leaves
// communication padding and ghosts at -1.
func globalsOf(t *testing.T, d Distribution, a, r int, owned bool, ghosts [][2]int64) []int64 {
	s, err := splitaxes.SideOf(d.Dists[a], d.Shape[a], d.Chunks[a], owned)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, d.Chunks[a][r])
	for i := range out {
		out[i] = -1
	}
	for _, run := range s.Runs {
		if run.Chunk == r {
			for k := range run.Len {
				out[run.Local+k] = splitaxes.Wrap(run.Global+k, d.Shape[a], axisGhosts(d, a, ghosts))
			}
		}
	}
	return out
}

// axisGhosts returns the ghost zones of axis a: ghosts[a] when given (the
// array's, which the other side of a redistribution may set), else d's.
func axisGhosts(d Distribution, a int, ghosts [][2]int64) [2]int64 {
	if ghosts != nil {
		return ghosts[a]
	}
	return d.Dists[a].Ghosts()
}

// localArray builds process p's buffer: every element its global C-order
// index as <u4; with owned, padding holds 0xffffffff (input drops it).
func localArray(t *testing.T, d Distribution, p int, owned bool, ghosts ...[2]int64) rechunk.Chunk {
	dt, _ := rechunk.ParseDType("<u4")
	coords := splitaxes.Unravel(p, d.Grid)
	gs, shape := make([][]int64, len(coords)), make([]int64, len(coords))
	for a, r := range coords {
		gs[a] = globalsOf(t, d, a, r, owned, ghosts)
		shape[a] = int64(len(gs[a]))
	}
	c, _ := rechunk.NewChunk(dt, shape)
	i := 0
	eachIndex(shape, func(pos []int64) {
		v := int64(0)
		for a := range pos {
			if g := gs[a][pos[a]]; g < 0 || v < 0 {
				v = -1
			} else {
				v = v*d.Shape[a] + g
			}
		}
		binary.LittleEndian.PutUint32(c.Data[4*i:], uint32(v))
		i++
	})
	return c
}

func eachIndex(count []int64, f func([]int64)) {
	for _, n := range count {
		if n == 0 {
			return
		}
	}
	idx := make([]int64, len(count))
	for {
		f(idx)
		a := len(idx) - 1
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < count[a] {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}

// viaJSON writes every process's dim_data as JSON, decodes and checks it
// and rebuilds the input Distribution from it.
func viaJSON(t *testing.T, d Distribution) Distribution {
	ls := make([]Local, d.NumProcs())
	for p := range ls {
		b, err := json.Marshal(d.DimData(p))
		if err != nil {
			t.Fatal(err)
		}
		shape := make([]int64, len(d.Grid))
		for a, r := range splitaxes.Unravel(p, d.Grid) {
			shape[a] = d.Chunks[a][r]
		}
		if ls[p], err = Decode(b, p, shape); err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
	}
	got, err := FromLocals(ls)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// redistribute runs the shuffle's planning, cutting and assembling in
// memory and checks every element of every output process's buffer,
// padding included.
func redistribute(t *testing.T, in, out Distribution, ghosts ...[2]int64) {
	t.Helper()
	sp, err := Spec("t", "<u4", in, out)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := sp.Plan()
	if err != nil {
		t.Fatal(err)
	}
	dt, _ := rechunk.ParseDType("<u4")
	asms := make([]*rechunk.Assembler, out.NumProcs())
	for q := range asms {
		asms[q], _ = rechunk.NewAssembler(plan, splitaxes.Unravel(q, out.Grid), dt, rechunk.Config{})
	}
	for p := range in.NumProcs() {
		src := localArray(t, in, p, true, ghosts...)
		splits, _ := plan.NDSplits(splitaxes.Unravel(p, in.Grid))
		for nd := range splits {
			b, err := rechunk.AppendGathered(nil, src, nd.Slices, nd.Segs)
			if err != nil {
				t.Fatal(err)
			}
			piece, _ := rechunk.DecodePiece(b, dt)
			if err := asms[splitaxes.Ravel(nd.NewChunk, out.Grid)].PlaceOld(splitaxes.Unravel(p, in.Grid), piece); err != nil {
				t.Fatal(err)
			}
		}
	}
	for q, asm := range asms {
		got, err := asm.Chunk()
		if err != nil {
			t.Fatal(err)
		}
		if want := localArray(t, out, q, false, ghosts...); string(got.Data) != string(want.Data) {
			t.Fatalf("output process %d (%+v) differs", q, out.DimData(q))
		}
	}
}

// TestRedistributeRoundTrips redistributes random 1-3 d arrays between
// random pairs of distributions, with different process grids on the two
// sides, the input going through JSON dim_data, and back.
func TestRedistributeRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	for c := range 300 {
		shape := make([]int64, 1+r.IntN(3))
		for a := range shape {
			shape[a] = r.Int64N(12)
		}
		in, out := randomDistribution(r, shape, false), randomDistribution(r, shape, true)
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			decoded := viaJSON(t, in)
			if show(decoded) != show(in) {
				t.Fatalf("through JSON:\n got %+v\nwant %+v", decoded, in)
			}
			redistribute(t, decoded, out)
			redistribute(t, viaJSON(t, out), in)
		})
	}
}

// show prints a Distribution with its Dists dereferenced.
func show(d Distribution) string {
	s := fmt.Sprint(d.Shape, d.Grid, d.Chunks)
	for _, ds := range d.Dists {
		if ds == nil {
			s += " nil"
		} else {
			s += fmt.Sprintf(" %+v", *ds)
		}
	}
	return s
}

// periodicAxis returns one axis of size over procs processes for a
// periodic round trip: periodic blocks with ghost zones of width w, or any
// output kind (not periodic); nil Dist and ok false when w does not fit.
func periodicAxis(r *rand.Rand, size int64, procs int, w int64) ([]int64, *splitaxes.Dist, bool) {
	if r.IntN(2) == 0 {
		s, d := randomAxisDist(r, size, procs, true)
		return s, d, true
	}
	s, d, err := periodicBlocks(size, procs, w, 0)
	if err != nil || d.Ghosts() != [2]int64{min(w, s[0]), min(w, s[procs-1])} {
		return nil, nil, false
	}
	return s, d, true
}

// TestPeriodicRoundTrips redistributes random 1-3 d arrays between
// periodic blocks (ghost zones at both ends filled by wrap-around) and
// other distributions, or periodic blocks on another grid, each side's
// dim_data through JSON: every element is checked, ghosts included, and
// an input's ghosts are never read (they hold 0xffffffff).
func TestPeriodicRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 5))
	for c := 0; c < 300; c++ {
		shape := make([]int64, 1+r.IntN(3))
		ghosts := make([][2]int64, len(shape))
		in := Distribution{Shape: shape, Grid: make([]int, len(shape)), Chunks: make([][]int64, len(shape)), Dists: make([]*splitaxes.Dist, len(shape))}
		out := Distribution{Shape: shape, Grid: make([]int, len(shape)), Chunks: make([][]int64, len(shape)), Dists: make([]*splitaxes.Dist, len(shape))}
		ok := true
		for a := range shape {
			shape[a] = 4 + r.Int64N(10)
			w := 1 + r.Int64N(2)
			in.Grid[a], out.Grid[a] = 1+r.IntN(3), 1+r.IntN(3)
			var ok1, ok2 bool
			in.Chunks[a], in.Dists[a], ok1 = periodicAxis(r, shape[a], in.Grid[a], w)
			out.Chunks[a], out.Dists[a], ok2 = periodicAxis(r, shape[a], out.Grid[a], w)
			gi, gn := in.Dists[a].Ghosts(), out.Dists[a].Ghosts()
			ok = ok && ok1 && ok2 && (!periodic(in.Dists[a]) || !periodic(out.Dists[a]) || gi == gn)
			ghosts[a] = max2(gi, gn)
		}
		if !ok {
			continue
		}
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			decoded := viaJSON(t, in)
			if show(decoded) != show(in) {
				t.Fatalf("through JSON:\n got %+v\nwant %+v", decoded, in)
			}
			redistribute(t, decoded, out, ghosts...)
			redistribute(t, viaJSON(t, out), in, ghosts...)
		})
	}
}

func periodic(d *splitaxes.Dist) bool { return d != nil && d.Periodic }

// max2 is the larger of two ghost zones (one is zero or both are equal).
func max2(a, b [2]int64) [2]int64 { return [2]int64{max(a[0], b[0]), max(a[1], b[1])} }
