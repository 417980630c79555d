package job

// The set-index command: sort a dataframe of Parquet files by one column
// across partitions, as Dask's set_index does.
//
// It samples the column (up to --sample values per file, deterministic),
// chooses P-1 divisions as approximate weighted quantiles (dfops.Sample), or
// takes --divisions, range-partitions the rows by them with a shuffle (nulls
// and NaNs go to the last partition), then sorts each output partition by
// the column, stably, and writes it as part-i.parquet: reading the files in
// name order gives every row sorted by the column, rows with equal keys in
// input order (file order, then row order), nulls last. When one value holds
// more than 1/P of the sample, neighbouring divisions are equal and the
// partitions between them stay empty, so there are always P files; all rows
// of one value land in one partition. The sort runs on the nodes: the owner
// of each partition sorts it (a sort op, client.Result.Sort) and streams the
// sorted rows, which this process writes; a partition of one hot value is
// sorted on its owner, which holds it twice (input and sorted copy).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/table"
	"golang.org/x/sync/errgroup"
)

// SetIndexConfig is a sort of Parquet files by one column (the set-index
// command).
type SetIndexConfig struct {
	Input, Column, Divisions string // glob pattern; sort column; JSON list or "" to sample
	Sample                   int    // values sampled per input file
	// PartitionsGiven is set when Job.Partitions was given with Divisions:
	// then they must agree.
	PartitionsGiven bool
	Job             ShuffleConfig
}

// SetIndexPlan is a checked set-index: everything needed to run it.
type SetIndexPlan struct {
	cfg        SetIndexConfig
	in         *dfInput
	divisions  []json.RawMessage
	sampled    int
	sampleSecs float64
	write      parquetio.WriteConfig
}

// SetIndexReport is what a set-index measured.
type SetIndexReport struct {
	nodes                 int
	plan                  *SetIndexPlan
	where                 string
	startSecs             float64
	shuffleSecs, sortSecs float64
	totalSecs             float64
	rowsIn, rowsOut       int64
	arrowBytes, fileOut   int64
	largest               [2]int64 // partition, rows
	empty                 int
	written               string // who wrote the files (partWriter.where)
	synced                string // how the files were made durable (partWriter.synced)
	readWhere             string // who read the input files (readWhere)
}

// PlanSetIndex checks the inputs (the caller has checked the flags on their
// own), chooses the divisions and builds the spec.
func PlanSetIndex(ctx context.Context, f SetIndexConfig) (*SetIndexPlan, error) {
	if f.Column == "" {
		return nil, errors.New("--column is required (the column to sort by)")
	}
	p := &SetIndexPlan{cfg: f}
	var err error
	if p.write, err = f.Job.output(); err != nil {
		return nil, err
	}
	if p.in, err = newDFInput("input", "input", f.Input); err != nil {
		return nil, err
	}
	if err := p.chooseDivisions(ctx, f.PartitionsGiven); err != nil {
		return nil, err
	}
	rule := table.Rule{Kind: table.Range, Columns: []string{f.Column}, Divisions: p.divisions}
	if err := p.in.makeSpec(jobID(f.Job.ID, "set-index"), "", "", len(p.divisions)+1, rule); err != nil {
		return nil, err
	}
	return p, shufflePrepareOutput(f.Job.Output, f.Job.Overwrite)
}

// chooseDivisions parses --divisions or samples the column.
func (p *SetIndexPlan) chooseDivisions(ctx context.Context, partitionsSet bool) error {
	f := p.cfg
	field, err := setIndexField(p.in.schema, f.Column)
	if err != nil {
		return err
	}
	if f.Divisions != "" {
		if err := json.Unmarshal([]byte(f.Divisions), &p.divisions); err != nil {
			return fmt.Errorf("--divisions: want a JSON list such as [10,20]: %v", err)
		}
		if partitionsSet && f.Job.Partitions != len(p.divisions)+1 {
			return fmt.Errorf("--partitions %d and %d --divisions disagree (P partitions need P-1 divisions)", f.Job.Partitions, len(p.divisions))
		}
		return nil
	}
	t := time.Now()
	p.divisions, p.sampled, err = sampleDivisions(ctx, p.in.inputs.Files, field, f.Job.Partitions, f.Sample)
	p.sampleSecs = time.Since(t).Seconds()
	return err
}

// setIndexField returns the one column named name.
func setIndexField(schema *arrow.Schema, name string) (arrow.Field, error) {
	idx := schema.FieldIndices(name)
	if len(idx) != 1 {
		return arrow.Field{}, fmt.Errorf("--column %q: the input has %d columns of that name (columns: %v)", name, len(idx), schemaNames(schema))
	}
	return schema.Field(idx[0]), nil
}

func schemaNames(schema *arrow.Schema) []string {
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// sampleDivisions samples up to perFile values of field from each file
// (at least 20 per partition over all files) and returns parts-1 divisions
// and the number of values sampled.
func sampleDivisions(ctx context.Context, files []string, field arrow.Field, parts, perFile int) ([]json.RawMessage, int, error) {
	if parts < 2 {
		return nil, 0, nil
	}
	s, err := dfops.NewSample(field.Type)
	if err != nil {
		return nil, 0, fmt.Errorf("--column %q: %w", field.Name, err)
	}
	k := max(perFile, (20*parts+len(files)-1)/len(files))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0)) // reading a column is CPU work: decoding pages
	for t, path := range files {
		g.Go(func() error {
			chunks, _, err := parquetio.ReadColumnChunks(gctx, path, field.Name, memory.DefaultAllocator) // not joined: a copy of the column
			if err != nil {
				return err
			}
			defer func() {
				for _, c := range chunks {
					c.Release()
				}
			}()
			mu.Lock()
			defer mu.Unlock()
			if _, err := s.AddChunks(chunks, k, uint64(t)); err != nil { // the divisions do not depend on the order of Adds
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	divs, err := s.Divisions(parts)
	if err != nil {
		return nil, 0, fmt.Errorf("--column %q: %w (give --divisions)", field.Name, err)
	}
	return divs, s.Len(), nil
}

// Run shuffles the input by range, then sorts and writes every partition.
func (p *SetIndexPlan) Run(ctx context.Context) (SetIndexReport, error) {
	cc, err := p.cfg.Job.clusterFor(p.in.inputs.Files)
	if err != nil {
		return SetIndexReport{}, err
	}
	cl, err := OpenCluster(ctx, cc)
	if err != nil {
		return SetIndexReport{}, err
	}
	defer cl.Close()
	addrs, prog := cl.Addrs, p.cfg.Job.Progress.orNop()
	rep := SetIndexReport{plan: p, nodes: len(addrs), where: cl.Where(), startSecs: cl.StartSeconds}
	start := time.Now()
	res, err := p.in.run(ctx, p.cfg.Job, cl, prog)
	if err != nil {
		return rep, err
	}
	defer res.Close(context.WithoutCancel(ctx))
	rep.shuffleSecs, rep.readWhere = time.Since(start).Seconds(), readWhere(res)
	t := time.Now()
	if err := p.sortAll(ctx, res, jobParallel(p.cfg.Job, len(addrs)), &rep, prog); err != nil {
		return rep, err
	}
	rep.sortSecs, rep.totalSecs = time.Since(t).Seconds(), time.Since(start).Seconds()
	rep.rowsIn, rep.arrowBytes = p.in.counter.totals()
	if rep.rowsIn != p.in.inputs.Rows || rep.rowsOut != rep.rowsIn {
		return rep, fmt.Errorf("row count mismatch: input footers say %d, read %d, written %d", p.in.inputs.Rows, rep.rowsIn, rep.rowsOut)
	}
	return rep, p.writeDivisions()
}

// sortAll sorts every partition into its file, in parallel.
func (p *SetIndexPlan) sortAll(ctx context.Context, res *client.Result, par int, rep *SetIndexReport, prog Progress) error {
	var mu sync.Mutex
	n := p.in.spec.Partitions
	out, err := newPartWriter(ctx, p.cfg.Job, n, p.in.schema, p.write)
	if err != nil {
		return err
	}
	defer func() { rep.written, rep.synced = out.where(), out.synced() }()
	work := func(ctx context.Context, part int) error {
		rows, size, err := p.sortPartition(ctx, res, out, part)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		rep.rowsOut, rep.fileOut = rep.rowsOut+rows, rep.fileOut+size
		if rows > rep.largest[1] {
			rep.largest = [2]int64{int64(part), rows}
		}
		if rows == 0 {
			rep.empty++
		}
		return nil
	}
	return out.writeAll(ctx, par, "sort", prog, work)
}

// sortPartition has the owner of partition part sort it by the column and
// writes the sorted rows; it returns the rows and the file's size.
func (p *SetIndexPlan) sortPartition(ctx context.Context, res *client.Result, out *partWriter, part int) (int64, int64, error) {
	r, err := out.write(part, func(ws api.WriteSpec) (api.OpStats, error) {
		return res.SortFile(ctx, part, p.cfg.Column, ws)
	}, func(write func(arrow.Record) error) (api.OpStats, error) {
		return res.Sort(ctx, part, p.cfg.Column, write)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("partition %d: sort: %w", part, err)
	}
	if op := r.op; len(op.InputRows) != 1 || op.InputRows[0] != r.rows {
		return 0, 0, fmt.Errorf("partition %d: sort on node %s: input rows %v, %d rows written", part, op.Node, op.InputRows, r.rows)
	}
	return r.rows, r.size, nil
}

// writeDivisions saves the column and divisions as divisions.json in the
// output directory, next to the partitions they describe.
func (p *SetIndexPlan) writeDivisions() error {
	b, err := json.Marshal(map[string]any{"column": p.cfg.Column, "partitions": p.in.spec.Partitions, "divisions": p.divisionsJSON()})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(p.cfg.Job.Output, "divisions.json"), append(b, '\n'), 0o644)
}

// divisionsJSON is the divisions as one JSON list ([] for one partition).
func (p *SetIndexPlan) divisionsJSON() json.RawMessage {
	if len(p.divisions) == 0 {
		return json.RawMessage("[]")
	}
	b, _ := json.Marshal(p.divisions)
	return b
}

// Print writes the report as the set-index command prints it.
func (r SetIndexReport) Print(w io.Writer) {
	p, where := r.plan, r.where
	fmt.Fprintf(w, "verified: rows in = rows out\n")
	fmt.Fprintf(w, "divisions    %s\n", p.divisionsJSON())
	if p.sampled > 0 {
		fmt.Fprintf(w, "sample       %d values of %q in %.2f s\n", p.sampled, p.cfg.Column, p.sampleSecs)
	}
	fmt.Fprintf(w, "cluster      %s of %d nodes, ready in %.2f s\n", where, r.nodes, r.startSecs)
	fmt.Fprintf(w, "rows in      %d from %d files (%s Parquet, %s Arrow; %s)\n", r.rowsIn, len(p.in.inputs.Files), FormatBytes(p.in.inputs.Bytes), FormatBytes(r.arrowBytes), r.readWhere)
	fmt.Fprintf(w, "rows out     %d in %d files sorted by %q (%s Parquet; largest: partition %d, %d rows; %d empty)\n",
		r.rowsOut, p.in.spec.Partitions, p.cfg.Column, FormatBytes(r.fileOut), r.largest[0], r.largest[1], r.empty)
	fmt.Fprintf(w, "shuffle      %.2f s (read Parquet, range-partition, put, barrier)\n", r.shuffleSecs)
	fmt.Fprintf(w, "sort+write   %.2f s (sorted on the nodes, files %s)\n", r.sortSecs, r.written)
	fmt.Fprintf(w, "synced       %s\n", r.synced)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s (Arrow bytes)\n", r.totalSecs, float64(r.arrowBytes)/1e6/r.totalSecs)
	fmt.Fprintf(w, "peak RSS     %s (whole process)\n", FormatBytes(measure.PeakRSS()))
}
