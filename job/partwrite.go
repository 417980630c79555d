package job

// Where the shuffle, merge and set-index jobs write their output files
// (--write-on).
//
// A node that owns a partition, or joins or sorts it, can write the result
// as the partition's Parquet file itself (flightproto.OpTicket.Write): the rows
// then never cross the network, nor pass through this process, which on a
// real cluster would write every partition alone. It needs the output
// directory to be the same on the nodes as here (one machine, or a shared
// file system) and the nodes to allow writing there: an in-process
// cluster's nodes may write under the job's output directory; a serve
// process only under its --output-root directories.
//
// With auto (the default), partitions go to the nodes until one refuses
// (codes.PermissionDenied: no output root over the directory, or the
// directory does not exist there); from then on this process writes them,
// the refused one included. A file a node reports written must be here with
// the size it reported, else the nodes wrote to a disk of their own: auto
// writes that partition here too and stops asking the nodes; nodes fails.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/durable"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/parquetio"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Where output files are written: ShuffleConfig.WriteOn.
const (
	WriteAuto   = "auto"   // the nodes when they can, else this process
	WriteNodes  = "nodes"  // the nodes, or the job fails
	WriteClient = "client" // this process
)

// checkWhere checks the value s of flag (--write-on or --read-on).
func checkWhere(flag, s string) error {
	switch s {
	case "", WriteAuto, WriteNodes, WriteClient:
		return nil
	}
	return fmt.Errorf("%s %q: want auto, nodes or client", flag, s)
}

// output returns the checked config of f's output files.
func (f ShuffleConfig) output() (parquetio.WriteConfig, error) {
	w := parquetio.WriteConfig{Compression: parquetio.Compression(f.Compression), NoDictionary: f.NoDictionary}
	// The job's files share their writers' choices.
	w.PlanKey, w.Plans = "client\x00"+f.Output, parquetio.NewPlanCache()
	if err := w.Validate(); err != nil {
		return w, err
	}
	if err := checkWhere("--read-on", f.ReadOn); err != nil {
		return w, err
	}
	return w, checkWhere("--write-on", f.WriteOn)
}

// clusterFor returns f's cluster config with, for an in-process cluster,
// the output directory as its nodes' output root and the directories of
// the input files (of every input) as their input roots.
func (f ShuffleConfig) clusterFor(inputs ...[]string) (ClusterConfig, error) {
	c := f.Cluster
	if !c.Embedded() {
		return c, nil
	}
	if f.WriteOn != WriteClient {
		dir, err := filepath.Abs(f.Output)
		if err != nil {
			return c, err
		}
		c.OutputRoots = append(c.OutputRoots[:len(c.OutputRoots):len(c.OutputRoots)], dir)
	}
	if f.ReadOn != ReadClient {
		dirs, err := inputDirs(slices.Concat(inputs...))
		if err != nil {
			return c, err
		}
		c.InputRoots = append(c.InputRoots[:len(c.InputRoots):len(c.InputRoots)], dirs...)
	}
	return c, nil
}

// partWriter writes output partitions where --write-on says.
type partWriter struct {
	mode   string
	dir    string // absolute
	parts  int
	schema *arrow.Schema
	cfg    parquetio.WriteConfig
	// why is set once auto gave up on the nodes: why it did.
	why   atomic.Pointer[string]
	nodes atomic.Int64 // partitions written by the nodes
	local atomic.Int64 // partitions written here
	swept atomic.Int64 // temporary files of failed attempts removed
	// syncs syncs the files committed without a sync (DeferSync) in the
	// background, as they are written; writeAll waits for it at its end.
	syncs    *durable.Syncer
	mu       sync.Mutex
	written  int     // files committed
	syncSecs float64 // how long syncAll waited
}

// newPartWriter returns the writer of a job's part files; its background
// syncs stop when ctx ends.
func newPartWriter(ctx context.Context, f ShuffleConfig, parts int, schema *arrow.Schema, cfg parquetio.WriteConfig) (*partWriter, error) {
	dir, err := filepath.Abs(f.Output)
	if err != nil {
		return nil, err
	}
	mode := f.WriteOn
	if mode == "" {
		mode = WriteAuto
	}
	cfg.DeferSync = true
	return &partWriter{mode: mode, dir: dir, parts: parts, schema: schema, cfg: cfg,
		syncs: durable.NewSyncer(ctx, durable.Batch, durable.Parallel)}, nil
}

// committed notes that the file at path was committed, to be synced.
func (w *partWriter) committed(path string) {
	w.mu.Lock()
	w.written++
	w.mu.Unlock()
	w.syncs.Add(path)
}

// syncAll makes every committed file durable, and their renames.
func (w *partWriter) syncAll(ctx context.Context) error {
	t := time.Now()
	err := w.syncs.Wait(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.syncSecs = time.Since(t).Seconds()
	if err != nil {
		return fmt.Errorf("%w: %w", parquetio.ErrWrite, err)
	}
	return nil
}

// partResult is what writing one partition did.
type partResult struct {
	op         flightproto.OpStats
	rows, size int64
}

// write writes partition part: onNodes runs the op with the file written
// by the node (ws), here runs it with the rows streamed to write.
func (w *partWriter) write(part int,
	onNodes func(ws flightproto.WriteSpec) (flightproto.OpStats, error),
	here func(write func(arrow.Record) error) (flightproto.OpStats, error)) (partResult, error) {
	path := filepath.Join(w.dir, PartFile(part, w.parts))
	if w.mode != WriteClient && w.why.Load() == nil {
		r, err := w.writeOnNode(path, onNodes)
		if err == nil || !w.fallBack(err) {
			return r, err
		}
	}
	var r partResult
	var err error
	r.rows, r.size, err = WritePartFile(path, w.schema, w.cfg, func(write func(arrow.Record) error) (err error) {
		r.op, err = here(write)
		return err
	})
	if err == nil {
		w.local.Add(1)
		w.committed(path)
	}
	return r, err
}

// errNotHere: a node reported a file written that is not here as it said.
var errNotHere = errors.New("the file a node reported written is not in the output directory here")

// writeOnNode has the node write the partition to path and checks the
// file is here.
func (w *partWriter) writeOnNode(path string, onNodes func(flightproto.WriteSpec) (flightproto.OpStats, error)) (partResult, error) {
	st, err := onNodes(flightproto.WriteSpec{Path: path, Compression: string(w.cfg.Compression), NoDictionary: w.cfg.NoDictionary,
		DeferSync: w.cfg.DeferSync})
	if err != nil {
		return partResult{}, err
	}
	if size := fileSize(path); size != st.FileBytes {
		return partResult{}, fmt.Errorf("%w: node %s wrote %s (%d bytes), here it has %d bytes: is --output on a file system the nodes share?",
			errNotHere, st.Node, path, st.FileBytes, size)
	}
	w.nodes.Add(1)
	w.committed(path)
	return partResult{op: st, rows: st.OutputRows, size: st.FileBytes}, nil
}

// fallBack reports whether auto writes here after err from the nodes, and
// if so remembers why.
func (w *partWriter) fallBack(err error) bool {
	if w.mode != WriteAuto || (status.Code(err) != codes.PermissionDenied && !errors.Is(err, errNotHere)) {
		return false
	}
	why := err.Error()
	w.why.CompareAndSwap(nil, &why)
	return true
}

// where says who wrote the files, for the report.
func (w *partWriter) where() string {
	n, l := w.nodes.Load(), w.local.Load()
	s := "written by the nodes"
	switch {
	case n > 0 && l > 0:
		s = fmt.Sprintf("%d written by the nodes, %d by this process", n, l)
	case l > 0:
		s = "written by this process"
	}
	if why := w.why.Load(); why != nil {
		s += " (the nodes could not: " + *why + ")"
	}
	if n := w.swept.Load(); n > 0 {
		s += fmt.Sprintf("; removed %d temporary files of failed attempts", n)
	}
	return s
}

// synced says how long making the files durable took, for the report.
func (w *partWriter) synced() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d files to disk, in the background as they were written and the last at the end in %.2f s", w.written, w.syncSecs)
}

// writeAll runs work on every partition, par at a time, reporting each
// one done as phase, then removes what failed attempts left (sweep) and
// makes every file durable (syncAll): the files of a job that returns no
// error are on disk.
func (w *partWriter) writeAll(ctx context.Context, par int, phase string, prog Progress, work func(ctx context.Context, part int) error) error {
	if err := forEachPartition(ctx, w.parts, par, work, func(done int) { prog(phase, done, w.parts) }); err != nil {
		return err
	}
	if err := w.sweep(); err != nil {
		return err
	}
	return w.syncAll(ctx)
}

// sweep removes, once every partition is written, the hidden temporary
// files that attempts which failed mid-file left beside the partitions (a
// node lost while it wrote one; parquetio names them
// ".part-NNNNN.parquet.tmp-*"). A straggler still writing one (its op was
// retried elsewhere) then fails to commit it, which nobody waits for.
func (w *partWriter) sweep() error {
	left, err := filepath.Glob(filepath.Join(w.dir, ".part-*.parquet.tmp-*"))
	if err != nil {
		return err
	}
	for _, f := range left {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		w.swept.Add(1)
	}
	return nil
}
