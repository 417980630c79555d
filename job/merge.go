package job

// The merge command: a pandas-style merge (hash join) of two sets of Parquet
// files.
//
// Both sides are shuffled by the same hash rule on their key columns into the
// same number of partitions. The right side's spec names the left shuffle as
// its co_partition: the coordinator gives it the left's ownership map as it
// stands (same members, same lost nodes, same seed), so partition i of both
// sides lives on the same node even if membership changed between the two
// shuffles, and later losses move both alike. Key columns of different but
// compatible types are cast to their common type (dfops.CommonKeyType)
// while the files are read, before the shuffle, so equal keys hash alike on
// both sides.
//
// The join runs on the nodes: for each partition i this process asks the
// owner of left partition i to join it with right partition i (a join op,
// client.Result.Join); that node reads both from its own store, joins them
// with dfops.HashJoinBatches and streams the result, which this process
// writes as part-i.parquet. Partitions are joined in parallel (--parallel).
// Only the join's output crosses the network. Had the right partition moved
// elsewhere (it cannot while both shuffles are co-partitioned), the node
// would fetch it from its owner; the report counts such partitions.
//
// A skewed key (one value in many rows) is not split: all its rows hash to
// one partition, which is simply large, and its join runs on that
// partition's owner. That node holds both input partitions (one
// concatenated copy each, besides the stored pieces), the hash table on the
// smaller side and 8 bytes per output row, and streams the output in
// batches of dfops.DefaultBatchRows rows; this process holds one batch at a
// time per partition being written. The report names the largest partition
// and the node that joined it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/table"
)

// MergeConfig is a merge of two sets of Parquet files (the merge command).
type MergeConfig struct {
	Left, Right         string // glob patterns of each side's files
	On, LeftOn, RightOn string // key columns, comma separated: On, or LeftOn with RightOn
	How, Suffixes       string // inner, left, right or outer; "_x,_y"
	Job                 ShuffleConfig
}

// MergePlan is a checked merge: everything needed to run it.
type MergePlan struct {
	cfg    MergeConfig
	id     string
	sides  [2]*dfInput
	join   dfops.JoinSpec
	schema *arrow.Schema // of the output files
	write  parquetio.WriteConfig
}

// MergeReport is what a merge measured.
type MergeReport struct {
	plan             *MergePlan
	nodes            int
	where            string
	startSecs        float64
	shuffleSecs      [2]float64
	joinSecs         float64
	totalSecs        float64
	rowsIn, rowsRead [2]int64
	arrowBytes       [2]int64
	rowsOut, fileOut int64
	largest          mergePartStats
	remote           int       // partitions whose join read an input from another node
	written          string    // who wrote the files (partWriter.where)
	synced           string    // how the files were made durable (partWriter.synced)
	readWhere        [2]string // who read each side's input files (readWhere)
}

// mergePartStats are the rows of one partition and where it was joined.
type mergePartStats struct {
	part             int
	left, right, out int64
	node             string // the node that joined it
	remote           int    // input partitions that node read from another node
}

// PlanMerge checks the inputs (the caller has checked the flags), chooses the key types and
// builds both shuffle specs.
func PlanMerge(f MergeConfig) (*MergePlan, error) {
	join, err := mergeJoinSpec(f)
	if err != nil {
		return nil, err
	}
	p := &MergePlan{cfg: f, join: join, id: jobID(f.Job.ID, "merge")}
	if p.write, err = f.Job.output(); err != nil {
		return nil, err
	}
	if err := p.openSides(); err != nil {
		return nil, err
	}
	if err := p.makeSpecs(); err != nil {
		return nil, err
	}
	return p, shufflePrepareOutput(f.Job.Output, f.Job.Overwrite)
}

// mergeJoinSpec builds the join from --on/--left-on/--right-on, --how and
// --suffixes.
func mergeJoinSpec(f MergeConfig) (dfops.JoinSpec, error) {
	var j dfops.JoinSpec
	switch {
	case f.On != "" && (f.LeftOn != "" || f.RightOn != ""):
		return j, errors.New("give either --on or --left-on with --right-on, not both")
	case f.On != "":
		j.LeftOn, j.RightOn = splitColumns(f.On), splitColumns(f.On)
	case f.LeftOn != "" && f.RightOn != "":
		j.LeftOn, j.RightOn = splitColumns(f.LeftOn), splitColumns(f.RightOn)
	default:
		return j, errors.New("--on is required (key columns, comma separated), or --left-on with --right-on")
	}
	suffixes := strings.Split(f.Suffixes, ",")
	if len(suffixes) != 2 {
		return j, fmt.Errorf("--suffixes %q: want two suffixes separated by a comma, e.g. _x,_y", f.Suffixes)
	}
	j.How, j.Suffixes = dfops.How(f.How), [2]string{suffixes[0], suffixes[1]}
	if err := j.Validate(); err != nil {
		return j, fmt.Errorf("--how/--on: %w", err)
	}
	return j, nil
}

// splitColumns splits a comma separated list; empty names stay empty and
// fail later with the column named.
func splitColumns(s string) []string {
	cols := strings.Split(s, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	return cols
}

// openSides checks both inputs and sets each side's shuffle schema: its
// files' schema with the key columns cast to their common types.
func (p *MergePlan) openSides() error {
	var err error
	if p.sides[0], err = newDFInput("left", "left", p.cfg.Left); err != nil {
		return err
	}
	if p.sides[1], err = newDFInput("right", "right", p.cfg.Right); err != nil {
		return err
	}
	types, err := dfops.KeyTypes(p.sides[0].schema, p.sides[1].schema, p.join)
	if err != nil {
		return err
	}
	p.sides[0].schema = castKeys(p.sides[0].schema, p.join.LeftOn, types)
	p.sides[1].schema = castKeys(p.sides[1].schema, p.join.RightOn, types)
	p.schema, err = dfops.JoinSchema(p.sides[0].schema, p.sides[1].schema, p.join)
	return err
}

// castKeys returns schema with the key columns of the given types.
func castKeys(schema *arrow.Schema, keys []string, types []arrow.DataType) *arrow.Schema {
	fields := schema.Fields()
	for k, name := range keys {
		i := schema.FieldIndices(name)[0]
		fields[i].Type = types[k]
	}
	return arrow.NewSchema(fields, nil)
}

// makeSpecs makes both shuffles: the same hash rule over each side's keys,
// the same partition count and seed, and the right co-partitioned with the
// left.
func (p *MergePlan) makeSpecs() error {
	keys := [2][]string{p.join.LeftOn, p.join.RightOn}
	co := ""
	for s, side := range p.sides {
		rule := table.Rule{Kind: table.Hash, Columns: keys[s]}
		if err := side.makeSpec(p.id+"-"+side.name, p.id, co, p.cfg.Job.Partitions, rule); err != nil {
			return err
		}
		co = side.spec.ID // the right side shares the left's ownership
	}
	return nil
}

// Run shuffles both sides, then joins and writes every partition.
func (p *MergePlan) Run(ctx context.Context) (MergeReport, error) {
	cc, err := p.cfg.Job.clusterFor(p.sides[0].inputs.Files, p.sides[1].inputs.Files)
	if err != nil {
		return MergeReport{}, err
	}
	cl, err := OpenCluster(ctx, cc)
	if err != nil {
		return MergeReport{}, err
	}
	defer cl.Close()
	addrs, prog := cl.Addrs, p.cfg.Job.Progress.orNop()
	rep := MergeReport{plan: p, nodes: len(addrs), where: cl.Where(), startSecs: cl.StartSeconds}
	start := time.Now()
	var res [2]*client.Result
	for s, side := range p.sides {
		t := time.Now()
		if res[s], err = side.run(ctx, p.cfg.Job, cl, prog); err != nil {
			return rep, fmt.Errorf("%s shuffle: %w", side.name, err)
		}
		defer res[s].Close(context.WithoutCancel(ctx))
		rep.shuffleSecs[s], rep.readWhere[s] = time.Since(t).Seconds(), readWhere(res[s])
	}
	t := time.Now()
	if err := p.joinAll(ctx, res, jobParallel(p.cfg.Job, len(addrs)), &rep, prog); err != nil {
		return rep, err
	}
	rep.joinSecs, rep.totalSecs = time.Since(t).Seconds(), time.Since(start).Seconds()
	return rep, p.checkRows(&rep)
}

// checkRows compares, per side, the rows in the footers, the rows read and
// the rows read back from the partitions.
func (p *MergePlan) checkRows(rep *MergeReport) error {
	for s, side := range p.sides {
		rep.rowsIn[s], rep.arrowBytes[s] = side.counter.totals()
		if rep.rowsIn[s] != side.inputs.Rows || rep.rowsRead[s] != rep.rowsIn[s] {
			return fmt.Errorf("%s: row count mismatch: input footers say %d, read %d, shuffled partitions hold %d",
				side.name, side.inputs.Rows, rep.rowsIn[s], rep.rowsRead[s])
		}
	}
	return nil
}

// joinAll joins every partition into its file, in parallel.
func (p *MergePlan) joinAll(ctx context.Context, res [2]*client.Result, par int, rep *MergeReport, prog Progress) error {
	var mu sync.Mutex
	n := p.cfg.Job.Partitions
	out, err := newPartWriter(ctx, p.cfg.Job, n, p.schema, p.write)
	if err != nil {
		return err
	}
	defer func() { rep.written, rep.synced = out.where(), out.synced() }()
	work := func(ctx context.Context, part int) error {
		st, size, err := p.joinPartition(ctx, res, out, part)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		rep.rowsRead[0], rep.rowsRead[1] = rep.rowsRead[0]+st.left, rep.rowsRead[1]+st.right
		rep.rowsOut, rep.fileOut = rep.rowsOut+st.out, rep.fileOut+size
		if st.remote > 0 {
			rep.remote++
		}
		if st.left+st.right > rep.largest.left+rep.largest.right {
			rep.largest = st
		}
		return nil
	}
	return out.writeAll(ctx, par, "join", prog, work)
}

// joinPartition has the owner of partition part join it and writes the
// result to its file; it returns the rows and the file's size.
func (p *MergePlan) joinPartition(ctx context.Context, res [2]*client.Result, out *partWriter, part int) (mergePartStats, int64, error) {
	st := mergePartStats{part: part}
	r, err := out.write(part, func(ws api.WriteSpec) (api.OpStats, error) {
		return res[0].JoinFile(ctx, res[1], part, p.join, ws)
	}, func(write func(arrow.Record) error) (api.OpStats, error) {
		return res[0].Join(ctx, res[1], part, p.join, write)
	})
	if err != nil {
		return st, 0, fmt.Errorf("partition %d: join: %w", part, err)
	}
	op := r.op
	if len(op.InputRows) != 2 {
		return st, 0, fmt.Errorf("partition %d: join on node %s reported %d input row counts, want 2", part, op.Node, len(op.InputRows))
	}
	st.left, st.right, st.out, st.node, st.remote = op.InputRows[0], op.InputRows[1], r.rows, op.Node, op.Remote
	return st, r.size, nil
}

func fileSize(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}

// Print writes the report as the merge command prints it.
func (r MergeReport) Print(w io.Writer) {
	p, where := r.plan, r.where
	fmt.Fprintf(w, "verified: rows in = rows shuffled, on both sides\n")
	fmt.Fprintf(w, "cluster      %s of %d nodes, ready in %.2f s\n", where, r.nodes, r.startSecs)
	for s, side := range p.sides {
		fmt.Fprintf(w, "%-12s %d rows from %d files (%s Parquet, %s Arrow; %s), shuffled in %.2f s\n", side.name,
			r.rowsIn[s], len(side.inputs.Files), FormatBytes(side.inputs.Bytes), FormatBytes(r.arrowBytes[s]), r.readWhere[s], r.shuffleSecs[s])
	}
	fmt.Fprintf(w, "join         %s on %s: %d rows out in %d files (%s Parquet), %.2f s (on the nodes; %d partitions read an input from another node)\n",
		p.join.How, mergeKeyNames(p.join), r.rowsOut, p.cfg.Job.Partitions, FormatBytes(r.fileOut), r.joinSecs, r.remote)
	fmt.Fprintf(w, "files        %s\n", r.written)
	fmt.Fprintf(w, "synced       %s\n", r.synced)
	fmt.Fprintf(w, "largest      partition %d: %d left + %d right rows -> %d rows, joined on %s\n",
		r.largest.part, r.largest.left, r.largest.right, r.largest.out, r.largest.node)
	in := float64(r.arrowBytes[0] + r.arrowBytes[1])
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s (Arrow bytes of both sides)\n", r.totalSecs, in/1e6/r.totalSecs)
	fmt.Fprintf(w, "peak RSS     %s (whole process)\n", FormatBytes(measure.PeakRSS()))
}

func mergeKeyNames(j dfops.JoinSpec) string {
	if strings.Join(j.LeftOn, ",") == strings.Join(j.RightOn, ",") {
		return strings.Join(j.LeftOn, ",")
	}
	return strings.Join(j.LeftOn, ",") + " = " + strings.Join(j.RightOn, ",")
}
