package job

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// ShuffleConfig is a Parquet shuffle (the shuffle command), and the part
// of merge and set-index they share with it: the cluster, the output and how
// it is written.
type ShuffleConfig struct {
	Input        string // Parquet files, a glob pattern (one input task per file)
	On           string // key column(s), comma separated
	Output       string // directory of the output files part-00000.parquet ...
	Partitions   int
	Divisions    string // range partitioning on one On column: JSON list of P-1 boundaries
	Cluster      ClusterConfig
	ID           string // job ID, the prefix of its shuffle IDs (default: <command>-<time>)
	Parallel     int    // input files put and output partitions processed at once (default 2 per node; see putParallel)
	BatchRows    int64  // rows per record batch read from an input file
	Compression  string // of the output files: auto (default), snappy, zstd or none
	Overwrite    bool   // remove part-*.parquet files already in Output
	NoDictionary bool   // write the output without dictionary encoding
	WriteOn      string // who writes the output files: auto (default), nodes or client
	ReadOn       string // who reads the input files: auto (default), nodes or client
	Progress     Progress
}

// ShufflePlan is a checked shuffle: everything needed to run it.
type ShufflePlan struct {
	cfg    ShuffleConfig
	inputs parquetio.Inputs
	spec   *spec.Spec
	schema *arrow.Schema // the spec's schema: of every record put and read
	write  parquetio.WriteConfig
}

// ShuffleReport is what a shuffle measured.
type ShuffleReport struct {
	files, partitions      int
	rowsIn, rowsOut        int64
	arrowBytes, parquetIn  int64
	parquetOut             int64
	nodes                  int
	readWhere              string // who read the input files (readWhere)
	startSecs              float64
	shuffleSecs, writeSecs float64
	totalSecs              float64
	attempts               int64
	coordinator            string
	where                  string
	written                string // who wrote the files (partWriter.where)
	synced                 string // how the files were made durable (partWriter.synced)
}

// PlanShuffle checks the input files and builds the spec; the caller has
// checked the flags themselves.
func PlanShuffle(f ShuffleConfig) (*ShufflePlan, error) {
	p := &ShufflePlan{cfg: f}
	var err error
	if p.write, err = f.output(); err != nil {
		return nil, err
	}
	files, err := parquetio.Glob(f.Input)
	if err != nil {
		return nil, err
	}
	if p.inputs, err = parquetio.CheckInputs(files); err != nil {
		return nil, err
	}
	if p.spec, err = shuffleSpec(f, p.inputs); err != nil {
		return nil, err
	}
	if p.schema, err = p.spec.Validate(); err != nil {
		return nil, err
	}
	return p, shufflePrepareOutput(f.Output, f.Overwrite)
}

// shuffleSpec makes the shuffle's spec: one task per file, the rule from
// --on and --divisions.
func shuffleSpec(f ShuffleConfig, in parquetio.Inputs) (*spec.Spec, error) {
	rule, parts, err := shuffleRule(f)
	if err != nil {
		return nil, err
	}
	codec, err := table.NewCodec(in.Schema, nil)
	if err != nil {
		return nil, err
	}
	id := f.ID
	if id == "" {
		id = fmt.Sprintf("shuffle-%d", time.Now().UnixNano())
	}
	return &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: len(in.Files), Partitions: parts, Rows: in.Rows,
		Schema: codec.SchemaBytes(), Rule: rule}, nil
}

// shuffleRule returns the partitioning rule and the number of partitions.
func shuffleRule(f ShuffleConfig) (table.Rule, int, error) {
	var cols []string
	for _, c := range strings.Split(f.On, ",") {
		if c = strings.TrimSpace(c); c == "" {
			return table.Rule{}, 0, fmt.Errorf("--on %q: empty column name", f.On)
		}
		cols = append(cols, c)
	}
	if f.Divisions == "" {
		return table.Rule{Kind: table.Hash, Columns: cols}, f.Partitions, nil
	}
	var divs []json.RawMessage
	if err := json.Unmarshal([]byte(f.Divisions), &divs); err != nil {
		return table.Rule{}, 0, fmt.Errorf("--divisions: want a JSON list such as [10,20]: %v", err)
	}
	parts := f.Partitions
	if parts == 0 {
		parts = len(divs) + 1
	}
	return table.Rule{Kind: table.Range, Columns: cols, Divisions: divs}, parts, nil
}

// shufflePrepareOutput creates dir and refuses (or, with overwrite, removes) the
// output files of an earlier run, so no stale partition is left behind.
func shufflePrepareOutput(dir string, overwrite bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "part-*.parquet"))
	if err != nil || len(old) == 0 {
		return err
	}
	if !overwrite {
		return fmt.Errorf("--output %s already holds %d part-*.parquet files (remove them or pass --overwrite)", dir, len(old))
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// PartFile is the name of output partition p out of n: zero padded so that
// names sort in partition order.
func PartFile(p, n int) string {
	width := max(5, len(strconv.Itoa(n-1)))
	return fmt.Sprintf("part-%0*d.parquet", width, p)
}

// Run runs the plan on its cluster and writes the output files.
func (p *ShufflePlan) Run(ctx context.Context) (ShuffleReport, error) {
	cc, err := p.cfg.clusterFor(p.inputs.Files)
	if err != nil {
		return ShuffleReport{}, err
	}
	cl, err := OpenCluster(ctx, cc)
	if err != nil {
		return ShuffleReport{}, err
	}
	defer cl.Close()
	addrs, prog := cl.Addrs, p.cfg.Progress.orNop()
	rep := ShuffleReport{files: len(p.inputs.Files), partitions: p.spec.Partitions, nodes: len(addrs),
		parquetIn: p.inputs.Bytes, coordinator: addrs[0], where: cl.Where(), startSecs: cl.StartSeconds}
	start := time.Now()
	in := newShuffleCounter(len(p.inputs.Files))
	job := client.Job{Spec: p.spec, Nodes: addrs, Parallel: putParallel(p.cfg, cl), Auth: p.cfg.Cluster.Auth,
		Input:    func(t int) ([]arrow.Record, error) { return p.readTask(ctx, t, in) },
		Progress: func(done, total int) { prog("put", done, total) }}
	if err := p.cfg.nodeInput(&job, p.inputs, in.setPut); err != nil {
		return rep, err
	}
	res, err := client.Run(ctx, job)
	if err != nil {
		return rep, err
	}
	rep.readWhere = readWhere(res)
	defer res.Close(context.WithoutCancel(ctx))
	rep.attempts = res.Attempts()
	rep.shuffleSecs = time.Since(start).Seconds()
	writeStart := time.Now()
	if err := p.writeAll(ctx, res, &rep, prog); err != nil {
		return rep, err
	}
	rep.writeSecs = time.Since(writeStart).Seconds()
	rep.totalSecs = time.Since(start).Seconds()
	rep.rowsIn, rep.arrowBytes = in.totals()
	return rep, shuffleCheckRows(rep, p.inputs.Rows)
}

// shuffleCheckRows compares rows in (footers and read) with rows written.
func shuffleCheckRows(rep ShuffleReport, footerRows int64) error {
	if rep.rowsIn != footerRows || rep.rowsOut != rep.rowsIn {
		return fmt.Errorf("row count mismatch: input footers say %d, read %d, written %d", footerRows, rep.rowsIn, rep.rowsOut)
	}
	return nil
}

// shuffleCounter records the rows and Arrow bytes of each input task's last
// read (a retried task is counted once).
type shuffleCounter struct {
	rows, bytes []atomic.Int64
}

func newShuffleCounter(tasks int) *shuffleCounter {
	return &shuffleCounter{rows: make([]atomic.Int64, tasks), bytes: make([]atomic.Int64, tasks)}
}

func (c *shuffleCounter) set(task int, recs []arrow.Record) {
	var rows, bytes int64
	for _, r := range recs {
		rows += r.NumRows()
		bytes += table.RecordBytes(r)
	}
	c.rows[task].Store(rows)
	c.bytes[task].Store(bytes)
}

// setPut records what a node read of task's file (rows from its footer;
// a skipped put read nothing and leaves the bytes as they were).
func (c *shuffleCounter) setPut(task int, rows int64, reply flightproto.PutReply) {
	c.rows[task].Store(rows)
	if !reply.Skipped {
		c.bytes[task].Store(int64(reply.InputBytes))
	}
}

func (c *shuffleCounter) totals() (rows, bytes int64) {
	for i := range c.rows {
		rows += c.rows[i].Load()
		bytes += c.bytes[i].Load()
	}
	return rows, bytes
}

// readTask reads input task t (file t) as records of the spec's schema.
func (p *ShufflePlan) readTask(ctx context.Context, t int, in *shuffleCounter) ([]arrow.Record, error) {
	recs, err := parquetio.ReadFile(ctx, p.inputs.Files[t], memory.DefaultAllocator, p.cfg.BatchRows)
	if err != nil {
		return nil, err
	}
	for i, r := range recs {
		if err := table.CheckSchema(p.schema, r.Schema()); err != nil {
			shuffleRelease(recs)
			return nil, fmt.Errorf("%w: %s: %w", parquetio.ErrSchemaMismatch, p.inputs.Files[t], err)
		}
		recs[i] = array.NewRecord(p.schema, r.Columns(), r.NumRows())
		r.Release()
	}
	in.set(t, recs)
	return recs, nil
}

func shuffleRelease(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// writeAll writes every output partition to its file with bounded
// parallelism, where --write-on says, and counts the rows and file bytes
// written in rep.
func (p *ShufflePlan) writeAll(ctx context.Context, res *client.Result, rep *ShuffleReport, prog Progress) error {
	out, err := newPartWriter(ctx, p.cfg, p.spec.Partitions, p.schema, p.write)
	if err != nil {
		return err
	}
	defer func() { rep.written, rep.synced = out.where(), out.synced() }()
	var rows, bytes atomic.Int64
	work := func(ctx context.Context, part int) error {
		r, err := out.write(part, func(ws api.WriteSpec) (api.OpStats, error) {
			return res.CopyFile(ctx, part, ws)
		}, func(write func(arrow.Record) error) (api.OpStats, error) {
			return api.OpStats{}, res.Read(ctx, part, write)
		})
		if err != nil {
			return fmt.Errorf("partition %d: %w", part, err)
		}
		rows.Add(r.rows)
		bytes.Add(r.size)
		return nil
	}
	err = out.writeAll(ctx, jobParallel(p.cfg, rep.nodes), "write", prog, work)
	rep.rowsOut, rep.parquetOut = rows.Load(), bytes.Load()
	return err
}

// shuffleFeed sends 0..n-1 to ch until ctx ends, then closes ch.
func shuffleFeed(ctx context.Context, ch chan<- int, n int) {
	defer close(ch)
	for i := range n {
		select {
		case ch <- i:
		case <-ctx.Done():
			return
		}
	}
}

// Print writes the report as the shuffle command prints it.
func (r ShuffleReport) Print(w io.Writer) {
	where := r.where
	fmt.Fprintf(w, "verified: rows in = rows out\n")
	fmt.Fprintf(w, "cluster      %s of %d nodes (coordinator %s), ready in %.2f s\n", where, r.nodes, r.coordinator, r.startSecs)
	fmt.Fprintf(w, "rows in      %d from %d files (%s Parquet, %s Arrow; %s)\n", r.rowsIn, r.files, FormatBytes(r.parquetIn), FormatBytes(r.arrowBytes), r.readWhere)
	fmt.Fprintf(w, "rows out     %d in %d files (%s Parquet)\n", r.rowsOut, r.partitions, FormatBytes(r.parquetOut))
	fmt.Fprintf(w, "shuffle      %.2f s (read Parquet, put, barrier; %d puts)\n", r.shuffleSecs, r.attempts)
	fmt.Fprintf(w, "write        %.2f s (every partition from its owner to Parquet; files %s)\n", r.writeSecs, r.written)
	fmt.Fprintf(w, "synced       %s\n", r.synced)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s (Arrow bytes)\n", r.totalSecs, float64(r.arrowBytes)/1e6/r.totalSecs)
	fmt.Fprintf(w, "peak RSS     %s (whole process)\n", FormatBytes(measure.PeakRSS()))
}
