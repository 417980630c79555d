package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// dimDataCases are array shuffles whose outputs are DAP distributions of
// each kind a target takes (and a regular grid, block on every axis).
func dimDataCases(t *testing.T) []*spec.Spec {
	t.Helper()
	shape := []int64{11, 7}
	in := dap.Regular([][]int64{{6, 5}, {7}})
	var out []*spec.Spec
	for id, tg := range map[string]dap.Target{
		"dd-cyclic": {ProcGrid: []int{2, 2}, Axes: []dap.TargetAxis{{DistType: "c", BlockSize: 2}, {DistType: "c"}}},
		"dd-padded": {ProcGrid: []int{3, 1}, Axes: []dap.TargetAxis{{DistType: "b", Padding: 1}, {DistType: "b"}}},
		"dd-blocks": {ProcGrid: []int{2, 3}, Axes: []dap.TargetAxis{{DistType: "b"}, {DistType: "b"}}},
	} {
		d, err := tg.Distribution(shape)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := dap.Spec(id, "<u2", in, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sp)
	}
	return append(out, spec.ArraySpec("dd-regular", "<u2", in.Chunks, spec.Chunks{{4, 4, 3}, {3, 4}}))
}

// TestDoGetSendsDimData runs array shuffles with DAP outputs on a node and
// checks that each partition's DoGet stream carries the partition's
// dim_data in its schema metadata, that it is what the spec gives
// (dap.Output), and that client.ReadLocal returns the same.
func TestDoGetSendsDimData(t *testing.T) {
	addr := startServer(t)
	for _, sp := range dimDataCases(t) {
		t.Run(sp.ID, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res := runArray(ctx, t, addr, sp)
			out := dap.Output(sp)
			for q := range out.NumProcs() {
				want, _ := json.Marshal(out.DimData(q))
				if got := sentDimData(ctx, t, addr, res.Endpoints[q]); string(got) != string(want) {
					t.Errorf("partition %d: stream sends %s, want %s", q, got, want)
				}
				_, l, err := res.ReadLocal(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := json.Marshal(l); string(got) != string(want) {
					t.Errorf("partition %d: ReadLocal gives %s, want %s", q, got, want)
				}
			}
		})
	}
}

// runArray runs sp on the node at addr, each old chunk zero-filled.
func runArray(ctx context.Context, t *testing.T, addr string, sp *spec.Spec) *client.Result {
	t.Helper()
	in := dap.Input(sp)
	dt, _ := rechunk.ParseDType(sp.DType)
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: []string{addr},
		Input: func(p int) ([]arrow.Record, error) {
			c, err := rechunk.NewChunk(dt, localShape(in, p))
			return []arrow.Record{ChunkRecord(c)}, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
	return res
}

// localShape is the buffer shape of process p of d.
func localShape(d dap.Distribution, p int) []int64 {
	shape := make([]int64, len(d.Grid))
	for a, r := range splitaxes.Unravel(p, d.Grid) {
		shape[a] = d.Chunks[a][r]
	}
	return shape
}

// sentDimData reads a partition's DoGet stream and returns the dim_data
// its schema carries.
func sentDimData(ctx context.Context, t *testing.T, addr string, ep client.Endpoint) []byte {
	t.Helper()
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: ep.Ticket})
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flightproto.NewReader(stream, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	for rdr.Next() {
	}
	local, ok := flightproto.DimDataOf(rdr.Schema())
	if !ok {
		t.Fatalf("partition %d: no %s in the stream's schema", ep.Partition, flightproto.DimDataKey)
	}
	return local
}
