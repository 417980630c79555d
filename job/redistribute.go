package job

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/npy"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// RedistributeConfig is a DAP redistribution on the cluster (the
// redistribute command). A directory holds one process's local array as
// proc-<rank>.npy and its {"__version__", "dim_data"} as proc-<rank>.json,
// ranks 0..N-1.
type RedistributeConfig struct {
	Input, Output string // directories; Output is created
	// To is the target: a dap.Target as JSON ({"proc_grid": [2, 2],
	// "axes": [{"dist_type": "c", "block_size": 64}, ...]}) or regular
	// chunks of a shape ({"chunks": [500, 2000]}).
	To       string
	ID       string // shuffle ID (default: redistribute-<time>)
	Cluster  ClusterConfig
	Parallel int // local arrays read/put and written at once (default 2 per node)
	Progress Progress
}

// RedistributePlan is a checked redistribution: the input's descriptions,
// the target and the spec.
type RedistributePlan struct {
	cfg     RedistributeConfig
	in, out dap.Distribution
	spec    *spec.Spec
	dtype   rechunk.DType
}

// RedistributeReport is what a redistribution measured.
type RedistributeReport struct {
	cfg              RedistributeConfig
	inProcs, outProc int
	bytes            int64
	crossBytes       int64 // in-process cluster: bytes sent between nodes
	seconds          float64
}

// Print writes the report as the redistribute command prints it.
func (r RedistributeReport) Print(w io.Writer) {
	fmt.Fprintf(w, "redistributed %s -> %s: %d -> %d processes, %s in %.2f s (%.1f MB/s), %s across the network, peak RSS %s\n",
		r.cfg.Input, r.cfg.Output, r.inProcs, r.outProc, FormatBytes(r.bytes), r.seconds, float64(r.bytes)/1e6/r.seconds,
		FormatBytes(r.crossBytes), FormatBytes(measure.PeakRSS()))
}

// procPath is the path of process p's file with extension ext in dir.
func procPath(dir string, p int, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("proc-%d.%s", p, ext))
}

// PlanRedistribute reads and checks the input's descriptions (the .npy
// headers and the dim_data) and the target; any error here is bad input.
func PlanRedistribute(cfg RedistributeConfig) (*RedistributePlan, error) {
	if cfg.Input == "" || cfg.Output == "" || cfg.To == "" {
		return nil, fmt.Errorf("--input, --output and --to are required")
	}
	ls, dt, err := readLocals(cfg.Input)
	if err != nil {
		return nil, err
	}
	in, err := dap.FromLocals(ls)
	if err != nil {
		return nil, err
	}
	out, err := ParseTarget(cfg.To, in.Shape)
	if err != nil {
		return nil, err
	}
	id := cmpOr(cfg.ID, fmt.Sprintf("redistribute-%d", time.Now().UnixNano()))
	sp, err := dap.Spec(id, dt.String(), in, out)
	if err != nil {
		return nil, err
	}
	return &RedistributePlan{cfg: cfg, in: in, out: out, spec: sp, dtype: dt}, nil
}

// readLocals decodes proc-0.json, proc-1.json, ... with their .npy
// headers' shapes; every array must have one dtype.
func readLocals(dir string) ([]dap.Local, rechunk.DType, error) {
	var ls []dap.Local
	var dt rechunk.DType
	for p := 0; ; p++ {
		raw, err := os.ReadFile(procPath(dir, p, "json"))
		if os.IsNotExist(err) && p > 0 {
			return ls, dt, nil
		}
		if err != nil {
			return nil, dt, err
		}
		h, err := npy.ReadHeader(procPath(dir, p, "npy"))
		if err != nil {
			return nil, dt, err
		}
		if p > 0 && h.DType != dt {
			return nil, dt, fmt.Errorf("process %d has dtype %s, process 0 %s", p, h.DType, dt)
		}
		dt = h.DType
		l, err := dap.Decode(raw, p, h.Shape)
		if err != nil {
			return nil, dt, err
		}
		ls = append(ls, l)
	}
}

// ParseTarget reads a target (see RedistributeConfig.To) for an array of
// the given shape.
func ParseTarget(s string, shape []int64) (dap.Distribution, error) {
	var t struct {
		dap.Target
		Chunks []int64 `json:"chunks"`
	}
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return dap.Distribution{}, fmt.Errorf("--to %q: %w", s, err)
	}
	if t.Chunks == nil {
		return t.Target.Distribution(shape)
	}
	if len(t.Chunks) != len(shape) {
		return dap.Distribution{}, fmt.Errorf("--to %q: %d chunk sizes for %d axes", s, len(t.Chunks), len(shape))
	}
	for _, c := range t.Chunks {
		if c < 1 {
			return dap.Distribution{}, fmt.Errorf("--to %q: chunk sizes must be positive", s)
		}
	}
	return dap.Regular(RegularChunks(shape, t.Chunks)), nil
}

// Run redistributes on the cluster and writes the output directory.
func (p *RedistributePlan) Run(ctx context.Context) (RedistributeReport, error) {
	start := time.Now()
	rep := RedistributeReport{cfg: p.cfg, inProcs: p.spec.Tasks, outProc: p.spec.Partitions, bytes: int64(p.dtype.ItemSize())}
	for _, n := range p.in.Shape {
		rep.bytes *= n
	}
	err := p.run(ctx, p.cfg.Progress.orNop(), &rep.crossBytes)
	rep.seconds = time.Since(start).Seconds()
	return rep, err
}

func (p *RedistributePlan) run(ctx context.Context, prog Progress, cross *int64) error {
	if err := os.MkdirAll(p.cfg.Output, 0o755); err != nil {
		return err
	}
	cl, err := OpenCluster(ctx, p.cfg.Cluster)
	if err != nil {
		return err
	}
	defer cl.Close()
	before := cl.CrossBytes()
	defer func() { *cross = cl.CrossBytes() - before }()
	res, err := client.Run(ctx, client.Job{Spec: p.spec, Nodes: cl.Addrs, Parallel: p.cfg.Parallel, Auth: p.cfg.Cluster.Auth, Progress: progress(prog, "put"),
		Input: func(t int) ([]arrow.Record, error) {
			c, err := npy.ReadFile(procPath(p.cfg.Input, t, "npy"))
			if err != nil {
				return nil, err
			}
			return []arrow.Record{api.ChunkRecord(c)}, nil
		}})
	if err != nil {
		return err
	}
	defer res.Close(context.WithoutCancel(ctx))
	return ForEachPar(p.spec.Partitions, max(p.cfg.Parallel, 2*len(cl.Addrs)), func(q int) error {
		return writeLocal(ctx, res, p.cfg.Output, q)
	}, func(done int) { prog("write", done, p.spec.Partitions) })
}

// writeLocal reads output process q's local array and writes it with its
// dim_data.
func writeLocal(ctx context.Context, res *client.Result, dir string, q int) error {
	c, dd, err := res.ReadLocal(ctx, q)
	if err != nil {
		return fmt.Errorf("output process %d: %w", q, err)
	}
	b, err := json.Marshal(dd)
	if err != nil {
		return err
	}
	if err := os.WriteFile(procPath(dir, q, "json"), b, 0o644); err != nil {
		return err
	}
	return npy.WriteFile(procPath(dir, q, "npy"), c)
}

// ForEachPar runs fn(0..n-1), par at a time, stopping at the first error;
// done is called (serially) after each success.
func ForEachPar(n, par int, fn func(int) error, done func(int)) error {
	next, finished := make(chan int), 0
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range max(par, 1) {
		wg.Go(func() {
			for i := range next {
				err := fn(i)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				} else if err == nil {
					finished++
					done(finished)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// GenDAP writes a synthetic <f8 distributed array of the given shape in
// distribution to (as RedistributeConfig.To) to dir: every element holds
// its global C-order index, padding included (it copies a neighbour's).
func GenDAP(dir string, shape []int64, to string) (dap.Distribution, error) {
	d, err := ParseTarget(to, shape)
	if err != nil {
		return d, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return d, err
	}
	for p := range d.NumProcs() {
		if err := writeGenerated(dir, d, p); err != nil {
			return d, err
		}
	}
	return d, nil
}

// writeGenerated writes process p's local array and dim_data.
func writeGenerated(dir string, d dap.Distribution, p int) error {
	c, err := GlobalIndexArray(d, p)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(d.DimData(p))
	if err := os.WriteFile(procPath(dir, p, "json"), b, 0o644); err != nil {
		return err
	}
	return npy.WriteFile(procPath(dir, p, "npy"), c)
}

// GlobalIndexArray returns process p's local array of d as <f8, each
// element its global C-order index.
func GlobalIndexArray(d dap.Distribution, p int) (rechunk.Chunk, error) {
	coords := splitaxes.Unravel(p, d.Grid)
	gs, shape := make([][]int64, len(coords)), make([]int64, len(coords))
	for a, r := range coords {
		var err error
		if gs[a], err = d.Globals(a, r); err != nil {
			return rechunk.Chunk{}, err
		}
		shape[a] = int64(len(gs[a]))
	}
	dt, _ := rechunk.ParseDType("<f8")
	c, err := rechunk.NewChunk(dt, shape)
	if err != nil {
		return c, err
	}
	fillGlobal(c.Data, gs, d.Shape)
	return c, nil
}

// fillGlobal writes, in C order over the box of per-axis global indices
// gs, each element's global C-order index as a little-endian float64.
func fillGlobal(data []byte, gs [][]int64, shape []int64) {
	idx := make([]int, len(gs))
	for _, g := range gs {
		if len(g) == 0 {
			return
		}
	}
	for off := 0; ; off += 8 {
		v := int64(0)
		for a, i := range idx {
			v = v*shape[a] + gs[a][i]
		}
		binary.LittleEndian.PutUint64(data[off:], math.Float64bits(float64(v)))
		a := len(idx) - 1
		for ; a >= 0; a-- {
			if idx[a]++; idx[a] < len(gs[a]) {
				break
			}
			idx[a] = 0
		}
		if a < 0 {
			return
		}
	}
}
