package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/spec"
)

// redistribute redistributes a square f8 array (10000x10000 at scale 1)
// from a block-cyclic distribution on a g x g process grid (eight blocks
// per process on each axis) to g x g regular chunks, g*g >= the other
// jobs' partitions (1024 at scale 1). Every element and the dim_data of
// every output local array are checked.
func (b *bench) redistribute(ctx context.Context) (benchRow, error) {
	side := max(4, int64(math.Round(10000*math.Sqrt(b.cfg.Scale))))
	g := int64(math.Ceil(math.Sqrt(float64(b.parts()))))
	bs, chunk := max(1, side/(8*g)), (side+g-1)/g
	sp, in, out, err := benchDAPSpec(side, g, bs, chunk)
	if err != nil {
		return benchRow{}, err
	}
	cl, err := job.OpenCluster(ctx, b.cfg.Cluster)
	if err != nil {
		return benchRow{}, err
	}
	defer cl.Close()
	start := time.Now()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: cl.Addrs, Auth: b.cfg.Cluster.Auth,
		Input: func(t int) ([]arrow.Record, error) {
			c, err := job.GlobalIndexArray(in, t)
			return []arrow.Record{api.ChunkRecord(c)}, err
		}})
	if err != nil {
		return benchRow{}, err
	}
	defer res.Close(context.WithoutCancel(ctx))
	put, readStart := time.Since(start).Seconds(), time.Now()
	err = job.ForEachPar(sp.Partitions, 2*len(cl.Addrs), func(q int) error { return checkLocal(ctx, res, out, q) }, func(int) {})
	label := fmt.Sprintf("redistribute f8 (%d,%d) c%d %dx%d->(%d,%d)", side, side, bs, g, g, chunk, chunk)
	return benchRow{name: label, bytes: 8 * side * side, put: put, read: time.Since(readStart).Seconds()}, err
}

// benchDAPSpec is the redistribution of a (side, side) f8 array from
// block-cyclic blocks of bs on a g x g grid to (chunk, chunk) chunks.
func benchDAPSpec(side, g, bs, chunk int64) (sp *spec.Spec, in, out dap.Distribution, err error) {
	cyc := dap.TargetAxis{DistType: "c", BlockSize: bs}
	shape := []int64{side, side}
	in, err = dap.Target{ProcGrid: []int{int(g), int(g)}, Axes: []dap.TargetAxis{cyc, cyc}}.Distribution(shape)
	if err != nil {
		return nil, in, out, err
	}
	out = dap.Regular(job.RegularChunks(shape, []int64{chunk, chunk}))
	sp, err = dap.Spec(fmt.Sprintf("bench-redistribute-%d", time.Now().UnixNano()), "<f8", in, out)
	return sp, in, out, err
}

// checkLocal reads output process q's local array and checks its elements
// (each its global index) and its dim_data.
func checkLocal(ctx context.Context, res *client.Result, out dap.Distribution, q int) error {
	got, dd, err := res.ReadLocal(ctx, q)
	if err != nil {
		return fmt.Errorf("output process %d: %w", q, err)
	}
	want, err := job.GlobalIndexArray(out, q)
	if err != nil {
		return err
	}
	if fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) || !bytes.Equal(got.Data, want.Data) {
		return fmt.Errorf("output process %d: shape %v, want %v, or elements differ", q, got.Shape, want.Shape)
	}
	gotDD, _ := json.Marshal(dd)
	if wantDD, _ := json.Marshal(out.DimData(q)); !bytes.Equal(gotDD, wantDD) {
		return fmt.Errorf("output process %d: dim_data %s, want %s", q, gotDD, wantDD)
	}
	return nil
}
