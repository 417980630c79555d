package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/zarr"
)

// rechunkFlags are the flags of rechunk.
type rechunkFlags struct {
	input, output, chunks, id  string
	cluster, dataDir, logLevel string
	nodes, parallel            int
	memLimit                   byteSize
}

func (f *rechunkFlags) register(fs *flag.FlagSet) {
	f.memLimit = 1 << 30
	fs.StringVar(&f.input, "input", "", "input Zarr v2 array (directory store)")
	fs.StringVar(&f.output, "output", "", "output Zarr v2 array (created; must not exist or be empty)")
	fs.StringVar(&f.chunks, "chunks", "", "new chunk shape, comma-separated (e.g. 1000,100)")
	fs.StringVar(&f.id, "id", "", "shuffle ID (default: rechunk-<time>)")
	fs.StringVar(&f.cluster, "cluster", "", "API address of a running cluster (default: an in-process cluster)")
	fs.IntVar(&f.nodes, "nodes", 4, "nodes of the in-process cluster")
	fs.IntVar(&f.parallel, "parallel", 0, "chunks read/put and written at once (default 2 per node)")
	fs.Var(&f.memLimit, "memory-limit", "memory budget per in-process node")
	fs.StringVar(&f.dataDir, "data-dir", "", "in-process nodes' data directory (default: temporary)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level")
}

func cmdRechunk(args []string, stdout, stderr io.Writer) int {
	var f rechunkFlags
	fs := newFlags("rechunk", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	in, sp, newShape, err := prepareRechunk(f)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode rechunk: %v\n", err)
		return 2
	}
	defer in.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	resetPeakRSS()
	start := time.Now()
	if err := runRechunk(ctx, f, in, sp, newShape, newProgress(stderr)); err != nil {
		fmt.Fprintf(stderr, "shufflenode rechunk: %v\n", err)
		return 1
	}
	secs := time.Since(start).Seconds()
	bytes := arrayBytes(in.Meta())
	fmt.Fprintf(stdout, "rechunked %s -> %s: %d -> %d chunks, %s in %.2f s (%.1f MB/s), peak RSS %s\n",
		f.input, f.output, sp.Tasks, sp.Partitions, formatBytes(bytes), secs, float64(bytes)/1e6/secs, formatBytes(peakRSS()))
	return 0
}

// prepareRechunk opens the input and builds the spec; any error here is bad
// input (exit 2).
func prepareRechunk(f rechunkFlags) (*zarr.Array, *spec.Spec, []int64, error) {
	if f.input == "" || f.output == "" || f.chunks == "" {
		return nil, nil, nil, fmt.Errorf("--input, --output and --chunks are required")
	}
	in, err := zarr.Open(f.input)
	if err != nil {
		return nil, nil, nil, err
	}
	m := in.Meta()
	shape, err := parseShape(f.chunks, len(m.Shape))
	if err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	id := f.id
	if id == "" {
		id = fmt.Sprintf("rechunk-%d", time.Now().UnixNano())
	}
	sp := spec.ArraySpec(id, m.DType.String(), in.ChunkSizes(), regularChunks(m.Shape, shape))
	if _, err := sp.Validate(); err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	return in, sp, shape, nil
}

// runRechunk rechunks on the cluster and writes the output store.
func runRechunk(ctx context.Context, f rechunkFlags, in *zarr.Array, sp *spec.Spec, shape []int64, prog func(string, int, int)) error {
	addrs, stop, err := openCluster(ctx, clusterOpts{cluster: f.cluster, nodes: f.nodes, memLimit: int64(f.memLimit),
		dataDir: f.dataDir, logLevel: f.logLevel}, os.Stderr)
	if err != nil {
		return err
	}
	defer stop()
	m := in.Meta()
	out, err := zarr.Create(f.output, zarr.Meta{Shape: m.Shape, Chunks: shape, DType: m.DType,
		Compressor: m.Compressor, FillValue: m.FillValue, Separator: m.Separator})
	if err != nil {
		return err
	}
	defer out.Close()
	oldGrid := in.Grid()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs, Parallel: f.parallel, Progress: progressFn(prog, "put"),
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
	return writeChunks(ctx, res, out, sp, max(f.parallel, 2*len(addrs)), prog)
}

// writeChunks reads every new chunk from its owner and writes it, par at a
// time.
func writeChunks(ctx context.Context, res *client.Result, out *zarr.Array, sp *spec.Spec, par int, prog func(string, int, int)) error {
	grid := out.Grid()
	parts := make(chan int)
	errs := make(chan error, par)
	var done sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range par {
		done.Go(func() {
			for p := range parts {
				c, err := res.ReadChunk(ctx, p)
				if err == nil {
					err = out.WriteChunk(splitaxes.Unravel(p, grid), c)
				}
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

func progressFn(prog func(string, int, int), phase string) func(int, int) {
	return func(done, total int) { prog(phase, done, total) }
}

// parseShape parses a comma-separated shape of ndim positive sizes.
func parseShape(s string, ndim int) ([]int64, error) {
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

// regularChunks splits shape into chunks of size chunk (the last one of an
// axis ragged).
func regularChunks(shape, chunk []int64) spec.Chunks {
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

// arrayBytes is the size of an array's data.
func arrayBytes(m zarr.Meta) int64 {
	n := int64(m.DType.ItemSize())
	for _, s := range m.Shape {
		n *= s
	}
	return n
}

func cmdLayout(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("layout", stderr)
	addr := fs.String("node", "127.0.0.1:7947", "API address of a member")
	id := fs.String("shuffle", "", "array shuffle ID")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *id == "" {
		fmt.Fprintln(stderr, "shufflenode layout: --shuffle is required")
		return 2
	}
	c, err := client.Dial(*addr)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode layout: %v\n", err)
		return 1
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := c.Layout(ctx, *id)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode layout: %v\n", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(l)
	return 0
}
