package integration

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// dapLocal builds process p's local array of d: each element holds its
// global C-order index as <u4, padding the value it copies.
func dapLocal(t *testing.T, d dap.Distribution, p int) rechunk.Chunk {
	t.Helper()
	coords := splitaxes.Unravel(p, d.Grid)
	gs, shape := make([][]int64, len(coords)), make([]int64, len(coords))
	for a, r := range coords {
		var err error
		if gs[a], err = d.Globals(a, r); err != nil {
			t.Fatal(err)
		}
		shape[a] = int64(len(gs[a]))
	}
	dt, _ := rechunk.ParseDType("<u4")
	c, _ := rechunk.NewChunk(dt, shape)
	for i := range shape[0] {
		for j := range shape[1] {
			v := gs[0][i]*d.Shape[1] + gs[1][j]
			binary.LittleEndian.PutUint32(c.Data[4*(i*shape[1]+j):], uint32(v))
		}
	}
	return c
}

// viaDimData sends every process's dim_data through JSON and back, as a
// DAP producer would hand it over, and checks the set.
func viaDimData(t *testing.T, d dap.Distribution) dap.Distribution {
	t.Helper()
	ls := make([]dap.Local, d.NumProcs())
	for p := range ls {
		b, _ := json.Marshal(d.DimData(p))
		var err error
		if ls[p], err = dap.Decode(b, p, dapLocal(t, d, p).Shape); err != nil {
			t.Fatal(err)
		}
	}
	got, err := dap.FromLocals(ls)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// redistribute runs one DAP redistribution on the cluster and checks every
// element of every output local array and its dim_data.
func redistribute(t *testing.T, addrs []string, id string, in, out dap.Distribution) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sp, err := dap.Spec(id, "<u4", in, out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs,
		Input: func(p int) ([]arrow.Record, error) { return []arrow.Record{api.ChunkRecord(dapLocal(t, in, p))}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close(context.WithoutCancel(ctx))
	l, err := res.Layout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(l.Shape); string(b) != fmt.Sprintf("[%d,%d]", out.Shape[0], out.Shape[1]) {
		t.Fatalf("layout shape %s, want %v", b, out.Shape)
	}
	for q := range out.NumProcs() {
		got, dd, err := res.ReadLocal(ctx, q)
		if err != nil {
			t.Fatalf("output process %d: %v", q, err)
		}
		if want := dapLocal(t, out, q); fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || string(got.Data) != string(want.Data) {
			t.Fatalf("output process %d: shape %v, want %v, or elements differ", q, got.Shape, want.Shape)
		}
		gotDD, _ := json.Marshal(dd)
		if wantDD, _ := json.Marshal(out.DimData(q)); string(gotDD) != string(wantDD) {
			t.Fatalf("output process %d: dim_data %s, want %s", q, gotDD, wantDD)
		}
	}
}

// TestDAPBlockCyclicRoundTrip redistributes a (37, 29) block-cyclic array
// on a 2x3 process grid to regular chunks and back, then to a 3x2 grid of
// blocks with communication padding, on a real cluster: every element of
// every local array is checked, padding included.
func TestDAPBlockCyclicRoundTrip(t *testing.T) {
	nodes := startCluster(t, 3, 64<<20)
	addrs := apiAddrs(nodes)
	shape := []int64{37, 29}
	cyc, err := dap.Target{ProcGrid: []int{2, 3}, Axes: []dap.TargetAxis{{DistType: "c", BlockSize: 4}, {DistType: "c", BlockSize: 3}}}.Distribution(shape)
	if err != nil {
		t.Fatal(err)
	}
	regular := dap.Regular([][]int64{{10, 10, 10, 7}, {15, 14}})
	padded, err := dap.Target{ProcGrid: []int{3, 2}, Axes: []dap.TargetAxis{{DistType: "b", Padding: 2}, {DistType: "b", Padding: 1}}}.Distribution(shape)
	if err != nil {
		t.Fatal(err)
	}
	redistribute(t, addrs, "dap-cyc-reg", viaDimData(t, cyc), regular)
	redistribute(t, addrs, "dap-reg-cyc", viaDimData(t, regular), cyc)
	redistribute(t, addrs, "dap-cyc-pad", viaDimData(t, cyc), padded)
	redistribute(t, addrs, "dap-pad-cyc", viaDimData(t, padded), cyc)
}

// TestDAPPeriodic redistributes a (37, 29) block-cyclic array to blocks
// whose first axis is periodic (ghost zones of 2 at both ends, filled by
// wrap-around, and communication padding of 2), then to another grid with
// the same periodic axis, on a real cluster: every element is checked,
// ghosts included (an input's ghosts are copies and are not read).
func TestDAPPeriodic(t *testing.T) {
	nodes := startCluster(t, 3, 64<<20)
	addrs := apiAddrs(nodes)
	shape := []int64{37, 29}
	cyc, err := dap.Target{ProcGrid: []int{2, 3}, Axes: []dap.TargetAxis{{DistType: "c", BlockSize: 4}, {DistType: "c", BlockSize: 3}}}.Distribution(shape)
	if err != nil {
		t.Fatal(err)
	}
	periodic, err := dap.Target{ProcGrid: []int{3, 2}, Axes: []dap.TargetAxis{{DistType: "b", Padding: 2, Periodic: true}, {DistType: "b"}}}.Distribution(shape)
	if err != nil {
		t.Fatal(err)
	}
	other, err := dap.Target{ProcGrid: []int{2, 2}, Axes: []dap.TargetAxis{{DistType: "b", Padding: 2, Periodic: true}, {DistType: "c", BlockSize: 5}}}.Distribution(shape)
	if err != nil {
		t.Fatal(err)
	}
	redistribute(t, addrs, "dap-cyc-per", viaDimData(t, cyc), periodic)
	redistribute(t, addrs, "dap-per-per", viaDimData(t, periodic), other)
}
