package job

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/zarr"
)

// RechunkConfig is a rechunk of a Zarr v2 array on the cluster into a new
// Zarr v2 array (the rechunk command).
type RechunkConfig struct {
	Input, Output string // Zarr v2 directory stores; Output must not exist or be empty
	Chunks        string // new chunk shape, comma separated
	ID            string // shuffle ID (default: rechunk-<time>)
	Cluster       ClusterConfig
	Parallel      int // chunks read/put and written at once (default 2 per node)
	Progress      Progress
}

// RechunkPlan is a checked rechunk: the open input and the spec.
type RechunkPlan struct {
	cfg      RechunkConfig
	in       *zarr.Array
	spec     *spec.Spec
	newShape []int64
}

// RechunkReport is what a rechunk measured.
type RechunkReport struct {
	cfg                  RechunkConfig
	oldChunks, newChunks int
	bytes                int64
	seconds              float64
	putSecs              float64 // reading the old chunks, putting them, and the barrier
	writeSecs            float64 // reading the new chunks and writing them
	syncSecs             float64 // waiting at the end for the new chunks' syncs
}

// Print writes the report as the rechunk command prints it.
func (r RechunkReport) Print(w io.Writer) {
	fmt.Fprintf(w, "rechunked %s -> %s: %d -> %d chunks, %s in %.2f s (%.1f MB/s; read + put + barrier %.2f s, read + write %.2f s, the last chunks synced to disk at the end in %.2f s), peak RSS %s\n",
		r.cfg.Input, r.cfg.Output, r.oldChunks, r.newChunks, FormatBytes(r.bytes), r.seconds, float64(r.bytes)/1e6/r.seconds,
		r.putSecs, r.writeSecs, r.syncSecs, FormatBytes(measure.PeakRSS()))
}

// PlanRechunk opens the input and builds the spec; any error here is bad
// input. Close releases the input.
func PlanRechunk(f RechunkConfig) (*RechunkPlan, error) {
	if f.Input == "" || f.Output == "" || f.Chunks == "" {
		return nil, fmt.Errorf("--input, --output and --chunks are required")
	}
	in, err := zarr.Open(f.Input)
	if err != nil {
		return nil, err
	}
	m := in.Meta()
	shape, err := ParseShape(f.Chunks, len(m.Shape))
	if err != nil {
		in.Close()
		return nil, err
	}
	id := f.ID
	if id == "" {
		id = fmt.Sprintf("rechunk-%d", time.Now().UnixNano())
	}
	sp := spec.ArraySpec(id, m.DType.String(), in.ChunkSizes(), RegularChunks(m.Shape, shape))
	if _, err := sp.Validate(); err != nil {
		in.Close()
		return nil, err
	}
	return &RechunkPlan{cfg: f, in: in, spec: sp, newShape: shape}, nil
}

// Close closes the input array.
func (p *RechunkPlan) Close() error { return p.in.Close() }

// Run rechunks on the cluster and writes the output store.
func (p *RechunkPlan) Run(ctx context.Context) (RechunkReport, error) {
	start := time.Now()
	rep := RechunkReport{cfg: p.cfg, oldChunks: p.spec.Tasks, newChunks: p.spec.Partitions, bytes: ArrayBytes(p.in.Meta())}
	err := p.run(ctx, p.cfg.Progress.orNop(), &rep)
	rep.seconds = time.Since(start).Seconds()
	return rep, err
}

func (p *RechunkPlan) run(ctx context.Context, prog Progress, rep *RechunkReport) error {
	cl, err := OpenCluster(ctx, p.cfg.Cluster)
	if err != nil {
		return err
	}
	defer cl.Close()
	in, sp, addrs := p.in, p.spec, cl.Addrs
	m := in.Meta()
	out, err := zarr.Create(p.cfg.Output, zarr.Meta{Shape: m.Shape, Chunks: p.newShape, DType: m.DType,
		Compressor: m.Compressor, FillValue: m.FillValue, Separator: m.Separator})
	if err != nil {
		return err
	}
	defer out.Close()
	out.DeferSyncs(ctx) // chunks synced in the background as they are written (writeChunks), the last at the end
	oldGrid := in.Grid()
	t := time.Now()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs, Parallel: p.cfg.Parallel, Auth: p.cfg.Cluster.Auth, Progress: progress(prog, "put"),
		Input: func(t int) ([]arrow.Record, error) {
			c, err := in.ReadChunk(splitaxes.Unravel(t, oldGrid))
			if err != nil {
				return nil, err
			}
			return []arrow.Record{api.ChunkRecord(c)}, nil
		}})
	if err != nil {
		return err
	}
	defer res.Close(context.WithoutCancel(ctx))
	rep.putSecs, t = time.Since(t).Seconds(), time.Now()
	if err := writeChunks(ctx, res, out, sp, max(p.cfg.Parallel, 2*len(addrs)), prog); err != nil {
		return err
	}
	rep.writeSecs, t = time.Since(t).Seconds(), time.Now()
	err = out.Sync(ctx)
	rep.syncSecs = time.Since(t).Seconds()
	return err
}

// writeChunks reads every new chunk from its owner and writes it, par at a
// time.
func writeChunks(ctx context.Context, res *client.Result, out *zarr.Array, sp *spec.Spec, par int, prog Progress) error {
	grid := out.Grid()
	parts := make(chan int)
	errs := make(chan error, par)
	var done sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range par {
		done.Go(func() {
			for p := range parts {
				err := res.VisitChunk(ctx, p, func(c rechunk.Chunk) error {
					return out.WriteChunk(splitaxes.Unravel(p, grid), c)
				})
				if err != nil {
					errs <- fmt.Errorf("new chunk %d: %w", p, err)
					return
				}
				mu.Lock()
				n++
				prog("write", n, sp.Partitions)
				mu.Unlock()
			}
		})
	}
	go func() {
		defer close(parts)
		for p := range sp.Partitions {
			select {
			case parts <- p:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	done.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// ParseShape parses a comma-separated shape of ndim positive sizes.
func ParseShape(s string, ndim int) ([]int64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != ndim {
		return nil, fmt.Errorf("--chunks %q has %d sizes, the array has %d dimensions", s, len(parts), ndim)
	}
	out := make([]int64, ndim)
	for i, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--chunks %q: size %q must be a positive integer", s, p)
		}
		out[i] = n
	}
	return out, nil
}

// RegularChunks splits shape into chunks of size chunk (the last one of an
// axis ragged).
func RegularChunks(shape, chunk []int64) spec.Chunks {
	out := make(spec.Chunks, len(shape))
	for a, total := range shape {
		for at := int64(0); at < total; at += chunk[a] {
			out[a] = append(out[a], min(chunk[a], total-at))
		}
		if total == 0 {
			out[a] = []int64{0}
		}
	}
	return out
}

// ArrayBytes is the size of an array's data.
func ArrayBytes(m zarr.Meta) int64 {
	n := int64(m.DType.ItemSize())
	for _, s := range m.Shape {
		n *= s
	}
	return n
}
