package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shuffleFlags are the flags of the shuffle command.
type shuffleFlags struct {
	input, on, output string
	partitions        int
	divisions         string
	cluster           string
	nodes             int
	memLimit          byteSize
	dataDir           string
	id                string
	parallel          int
	batchRows         int64
	compression       string
	overwrite         bool
	noDictionary      bool
	logLevel          string
}

func (f *shuffleFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.input, "input", "", "Parquet input files, a glob pattern such as 'DIR/*.parquet' (one input task per file)")
	fs.StringVar(&f.on, "on", "", "key column(s) to partition on, comma separated")
	fs.StringVar(&f.divisions, "divisions", "", "range partitioning on one --on column: JSON list of P-1 ascending boundaries, e.g. '[100,200]'")
	registerJobFlags(fs, f)
}

// shufflePlan is a checked command: everything needed to run it.
type shufflePlan struct {
	flags  shuffleFlags
	inputs parquetio.Inputs
	spec   *spec.Spec
	schema *arrow.Schema // the spec's schema: of every record put and read
	write  parquetio.WriteConfig
}

// shuffleReport is what a run measured.
type shuffleReport struct {
	files, partitions      int
	rowsIn, rowsOut        int64
	arrowBytes, parquetIn  int64
	parquetOut             int64
	nodes                  int
	startSecs              float64
	shuffleSecs, writeSecs float64
	totalSecs              float64
	attempts               int64
	coordinator            string
	embedded               bool
}

func cmdShuffle(args []string, stdout, stderr io.Writer) int {
	var f shuffleFlags
	fs := newFlags("shuffle", stderr)
	f.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	plan, err := planShuffle(f, shuffleSetFlags(fs))
	if err != nil {
		return shuffleFail(stderr, 2, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	resetPeakRSS()
	rep, err := runShuffle(ctx, plan, stderr)
	if err != nil {
		return shuffleFail(stderr, shuffleExitCode(err), err)
	}
	printShuffleReport(stdout, rep)
	return 0
}

// shuffleFail prints err on one line and returns code.
func shuffleFail(stderr io.Writer, code int, err error) int {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintf(stderr, "shufflenode shuffle: %s\n", msg)
	return code
}

// shuffleExitCode is 2 for errors caused by the input data, 1 otherwise.
func shuffleExitCode(err error) int {
	if errors.Is(err, parquetio.ErrRead) || errors.Is(err, parquetio.ErrSchemaMismatch) ||
		errors.Is(err, table.ErrSchemaMismatch) || errors.Is(err, table.ErrBadPartition) ||
		status.Code(err) == codes.InvalidArgument {
		return 2
	}
	return 1
}

// shuffleSetFlags returns the names of the flags given on the command line.
func shuffleSetFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// planShuffle checks the flags and the input files and builds the spec.
func planShuffle(f shuffleFlags, set map[string]bool) (*shufflePlan, error) {
	if err := shuffleCheckFlags(f, set); err != nil {
		return nil, err
	}
	p := &shufflePlan{flags: f, write: parquetio.WriteConfig{
		Compression: parquetio.Compression(f.compression), NoDictionary: f.noDictionary}}
	if err := p.write.Validate(); err != nil {
		return nil, err
	}
	files, err := parquetio.Glob(f.input)
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
	return p, shufflePrepareOutput(f.output, f.overwrite)
}

// shuffleCheckFlags checks the flags on their own.
func shuffleCheckFlags(f shuffleFlags, set map[string]bool) error {
	switch {
	case f.input == "":
		return errors.New("--input is required (e.g. --input 'data/*.parquet')")
	case f.on == "":
		return errors.New("--on is required (key columns, comma separated)")
	case f.output == "":
		return errors.New("--output is required (a directory)")
	case f.partitions <= 0 && f.divisions == "":
		return errors.New("--partitions must be at least 1")
	case f.nodes < 1:
		return errors.New("--nodes must be at least 1")
	case f.parallel < 0 || f.batchRows < 1:
		return errors.New("--parallel must be >= 0 and --batch-rows >= 1")
	}
	if f.cluster != "" {
		for _, name := range []string{"nodes", "memory-limit", "data-dir"} {
			if set[name] {
				return fmt.Errorf("--%s applies to the in-process cluster only, not with --cluster", name)
			}
		}
	}
	return nil
}

// shuffleSpec makes the shuffle's spec: one task per file, the rule from
// --on and --divisions.
func shuffleSpec(f shuffleFlags, in parquetio.Inputs) (*spec.Spec, error) {
	rule, parts, err := shuffleRule(f)
	if err != nil {
		return nil, err
	}
	codec, err := table.NewCodec(in.Schema, nil)
	if err != nil {
		return nil, err
	}
	id := f.id
	if id == "" {
		id = fmt.Sprintf("shuffle-%d", time.Now().UnixNano())
	}
	return &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: len(in.Files), Partitions: parts,
		Schema: codec.SchemaBytes(), Rule: rule}, nil
}

// shuffleRule returns the partitioning rule and the number of partitions.
func shuffleRule(f shuffleFlags) (table.Rule, int, error) {
	var cols []string
	for _, c := range strings.Split(f.on, ",") {
		if c = strings.TrimSpace(c); c == "" {
			return table.Rule{}, 0, fmt.Errorf("--on %q: empty column name", f.on)
		}
		cols = append(cols, c)
	}
	if f.divisions == "" {
		return table.Rule{Kind: table.Hash, Columns: cols}, f.partitions, nil
	}
	var divs []json.RawMessage
	if err := json.Unmarshal([]byte(f.divisions), &divs); err != nil {
		return table.Rule{}, 0, fmt.Errorf("--divisions: want a JSON list such as [10,20]: %v", err)
	}
	parts := f.partitions
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

// shufflePartFile is the name of output partition p out of n: zero padded so that
// names sort in partition order.
func shufflePartFile(p, n int) string {
	width := max(5, len(strconv.Itoa(n-1)))
	return fmt.Sprintf("part-%0*d.parquet", width, p)
}

// runShuffle runs the plan on the cluster and writes the output files.
func runShuffle(ctx context.Context, p *shufflePlan, stderr io.Writer) (shuffleReport, error) {
	t0 := time.Now()
	addrs, stopCluster, err := shuffleCluster(ctx, p.flags, stderr)
	if err != nil {
		return shuffleReport{}, err
	}
	defer stopCluster()
	rep := shuffleReport{files: len(p.inputs.Files), partitions: p.spec.Partitions, nodes: len(addrs),
		parquetIn: p.inputs.Bytes, coordinator: addrs[0], embedded: p.flags.cluster == "",
		startSecs: time.Since(t0).Seconds()}
	start := time.Now()
	in := newShuffleCounter(len(p.inputs.Files))
	prog := newProgress(stderr)
	res, err := client.Run(ctx, client.Job{Spec: p.spec, Nodes: addrs, Parallel: p.flags.parallel,
		Input:    func(t int) ([]arrow.Record, error) { return p.readTask(ctx, t, in) },
		Progress: func(done, total int) { prog("put", done, total) }})
	if err != nil {
		return rep, err
	}
	defer res.Close(context.WithoutCancel(ctx))
	rep.attempts = res.Attempts()
	rep.shuffleSecs = time.Since(start).Seconds()
	writeStart := time.Now()
	if rep.rowsOut, rep.parquetOut, err = p.writeAll(ctx, res, len(addrs), prog); err != nil {
		return rep, err
	}
	rep.writeSecs = time.Since(writeStart).Seconds()
	rep.totalSecs = time.Since(start).Seconds()
	rep.rowsIn, rep.arrowBytes = in.totals()
	return rep, shuffleCheckRows(rep, p.inputs.Rows)
}

// shuffleCheckRows compares rows in (footers and read) with rows written.
func shuffleCheckRows(rep shuffleReport, footerRows int64) error {
	if rep.rowsIn != footerRows || rep.rowsOut != rep.rowsIn {
		return fmt.Errorf("row count mismatch: input footers say %d, read %d, written %d", footerRows, rep.rowsIn, rep.rowsOut)
	}
	return nil
}

// shuffleCluster returns the API addresses of the cluster to use (the
// coordinator first) and a function that stops it if it was started here.
func shuffleCluster(ctx context.Context, f shuffleFlags, stderr io.Writer) ([]string, func(), error) {
	return openCluster(ctx, clusterOpts{cluster: f.cluster, nodes: f.nodes, memLimit: int64(f.memLimit),
		dataDir: f.dataDir, logLevel: f.logLevel}, stderr)
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
		bytes += shuffleRecordBytes(r)
	}
	c.rows[task].Store(rows)
	c.bytes[task].Store(bytes)
}

func (c *shuffleCounter) totals() (rows, bytes int64) {
	for i := range c.rows {
		rows += c.rows[i].Load()
		bytes += c.bytes[i].Load()
	}
	return rows, bytes
}

// shuffleRecordBytes is the size of a record's Arrow buffers.
func shuffleRecordBytes(rec arrow.Record) int64 {
	var n int64
	for _, col := range rec.Columns() {
		for _, b := range col.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n
}

// readTask reads input task t (file t) as records of the spec's schema.
func (p *shufflePlan) readTask(ctx context.Context, t int, in *shuffleCounter) ([]arrow.Record, error) {
	recs, err := parquetio.ReadFile(ctx, p.inputs.Files[t], memory.DefaultAllocator, p.flags.batchRows)
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
// parallelism; it returns the rows and file bytes written.
func (p *shufflePlan) writeAll(ctx context.Context, res *client.Result, nodes int, prog func(string, int, int)) (int64, int64, error) {
	par := p.flags.parallel
	if par <= 0 {
		par = 2 * nodes
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var rows, bytes, done atomic.Int64
	parts := make(chan int)
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for part := range parts {
				r, b, err := p.writePartition(ctx, res, part)
				if err != nil {
					cancel(err)
					continue
				}
				rows.Add(r)
				bytes.Add(b)
				prog("write", int(done.Add(1)), p.spec.Partitions)
			}
		})
	}
	shuffleFeed(ctx, parts, p.spec.Partitions)
	wg.Wait()
	return rows.Load(), bytes.Load(), context.Cause(ctx)
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

// writePartition reads output partition part from its owner into its file.
func (p *shufflePlan) writePartition(ctx context.Context, res *client.Result, part int) (rows, size int64, err error) {
	path := filepath.Join(p.flags.output, shufflePartFile(part, p.spec.Partitions))
	w, err := parquetio.Create(path, p.schema, p.write)
	if err != nil {
		return 0, 0, err
	}
	if err := res.Read(ctx, part, w.Write); err != nil {
		w.Abort()
		return 0, 0, fmt.Errorf("partition %d: %w", part, err)
	}
	rows = w.Rows()
	if err := w.Commit(); err != nil {
		return 0, 0, err
	}
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	return rows, size, nil
}

func printShuffleReport(w io.Writer, r shuffleReport) {
	where := "running cluster"
	if r.embedded {
		where = "in-process cluster"
	}
	fmt.Fprintf(w, "verified: rows in = rows out\n")
	fmt.Fprintf(w, "cluster      %s of %d nodes (coordinator %s), ready in %.2f s\n", where, r.nodes, r.coordinator, r.startSecs)
	fmt.Fprintf(w, "rows in      %d from %d files (%s Parquet, %s Arrow)\n", r.rowsIn, r.files, formatBytes(r.parquetIn), formatBytes(r.arrowBytes))
	fmt.Fprintf(w, "rows out     %d in %d files (%s Parquet)\n", r.rowsOut, r.partitions, formatBytes(r.parquetOut))
	fmt.Fprintf(w, "shuffle      %.2f s (read Parquet, put, barrier; %d puts)\n", r.shuffleSecs, r.attempts)
	fmt.Fprintf(w, "write        %.2f s (every partition from its owner to Parquet)\n", r.writeSecs)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s (Arrow bytes)\n", r.totalSecs, float64(r.arrowBytes)/1e6/r.totalSecs)
	fmt.Fprintf(w, "peak RSS     %s (whole process)\n", formatBytes(peakRSS()))
}
