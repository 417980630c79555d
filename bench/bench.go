package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/offheap"
)

// BenchJobs lists the jobs Bench knows, in the order it runs them.
func BenchJobs() []string {
	return []string{"demo", "rows", "array", "redistribute", "merge", "setindex"}
}

// BenchConfig is the benchmark of record (the bench command): the
// machine's ceilings, then each job with its time, rate, CPU, peak RSS and
// rate over the ceiling that bounds it.
type BenchConfig struct {
	// Cluster is the in-process cluster (Nodes, MemoryLimit, Logger); with
	// Procs.Processes > 0 the jobs run on serve processes instead.
	Cluster job.ClusterConfig
	Procs   ProcsConfig
	// Jobs to run, of BenchJobs (default demo, rows, array).
	Jobs []string
	// Scale multiplies every job's size (default 1: 500 MiB demo, 16M rows,
	// a 10000x10000 f8 array rechunked and redistributed from block-cyclic,
	// 1M-row merge and set-index inputs).
	Scale float64
	// TempDir holds generated Parquet inputs ("" = the system's).
	TempDir string
	// Repeat runs each job this many times in a row (0 or 1: once). An
	// in-process job's runs share one cluster, started before the first:
	// every run after it is a long-lived node's later shuffle, which
	// reuses the memory of the one before (--keep-regions), as the serve
	// processes of --cluster do from job to job.
	Repeat int
}

// Validate checks the jobs and scale.
func (c BenchConfig) Validate() error {
	for _, j := range c.Jobs {
		if !slices.Contains(BenchJobs(), j) {
			return fmt.Errorf("%w: unknown job %q (jobs: %s)", ErrBench, j, strings.Join(BenchJobs(), ","))
		}
	}
	if c.Scale < 0 || c.Scale > 100 {
		return fmt.Errorf("%w: scale %g: want a positive factor up to 100", ErrBench, c.Scale)
	}
	if c.Repeat < 0 || c.Repeat > maxRepeat {
		return fmt.Errorf("%w: repeat %d: want 1 to %d runs of each job", ErrBench, c.Repeat, maxRepeat)
	}
	return nil
}

func (c BenchConfig) withDefaults() BenchConfig {
	if len(c.Jobs) == 0 {
		c.Jobs = []string{"demo", "rows", "array"}
	}
	if c.Scale == 0 {
		c.Scale = 1
	}
	c.Repeat = max(c.Repeat, 1)
	return c
}

// maxRepeat is the most runs of each job BenchConfig.Repeat asks for.
const maxRepeat = 100

// benchRow is one job's line of the table.
type benchRow struct {
	name      string
	bytes     int64
	put, read float64 // seconds: put+barrier, read (or join, sort, write)
	// prep is what this process spent preparing the job (generating its
	// input files) before the job proper: not the job's, so its CPU time
	// and faults are not counted.
	prep    measure.Usage
	parquet bool            // a job that reads and writes Parquet: its ratio is to the Parquet bound
	usage   measure.Usage   // this process
	procs   []measure.Usage // each serve process, in order
	huge    int64           // transparent huge pages faulted in during the job, by any process
}

// totals sums the CPU seconds and minor faults of this process and every
// serve process.
func (r benchRow) totals() (cpu float64, faults int64) {
	cpu, faults = r.usage.CPUSeconds, r.usage.MinorFaults
	for _, p := range r.procs {
		cpu, faults = cpu+p.CPUSeconds, faults+p.MinorFaults
	}
	return cpu, faults
}

// fresh is the memory the job touched for the first time: its minor
// faults, of which the huge pages' (each also one minor fault).
func (r benchRow) fresh() freshMemory {
	_, faults := r.totals()
	return freshMemory{smallFaults: max(0, faults-r.huge), hugeFaults: r.huge}
}

// Bench runs the benchmark and writes its table to w as it goes.
func Bench(ctx context.Context, w io.Writer, c BenchConfig) error {
	c = c.withDefaults()
	if err := c.Validate(); err != nil {
		return err
	}
	b := &bench{cfg: c, w: w}
	defer b.close()
	if err := b.open(ctx); err != nil {
		return err
	}
	if err := b.ceilings(ctx); err != nil {
		return err
	}
	b.header()
	for _, name := range BenchJobs() {
		if !slices.Contains(c.Jobs, name) {
			continue
		}
		for _, run := range b.jobRuns(name) {
			if err := b.repeat(ctx, run); err != nil {
				return fmt.Errorf("job: bench %s: %w", name, err)
			}
		}
	}
	if err := b.firstTouch(); err != nil {
		return err
	}
	b.footnote()
	return nil
}

// reportDelay is how long the bench waits, after the jobs freed their
// memory, before it measures first touches (at full scale; scaled down with
// the data). Linux reports free memory to the hypervisor (free page
// reporting) from 2 s after it was freed, a batch at a time, and until then
// a freed huge page is warm: 500 MiB of huge pages touched again 0, 3, 6 and
// 10 s after the same amount was freed took 0.05, 0.33-0.47, 0.89-1.03 and
// 1.02-1.09 s here.
const reportDelay = 8 * time.Second

// firstTouch measures and prints the first-touch ceilings
// (FirstTouchCeilings) after the jobs, whose memory they would otherwise
// warm, once the memory the jobs freed is reported, over the bytes of the
// other ceilings.
func (b *bench) firstTouch() error {
	debug.FreeOSMemory() // and the arenas of the last job's cluster are unmapped by cleanups it runs
	time.Sleep(time.Duration(float64(reportDelay) * min(1, b.cfg.Scale)))
	cs, err := FirstTouchCeilings(b.ceilingBytes())
	if err != nil {
		return err
	}
	fmt.Fprintln(b.w)
	for _, c := range cs {
		b.printCeiling(c)
	}
	for _, r := range b.rows {
		b.printFresh(r, cs[0], cs[1])
	}
	return nil
}

// printFresh prints the memory job r touched for the first time and what
// that cost at the first-touch ceilings' rates small and huge.
func (b *bench) printFresh(r benchRow, small, huge Ceiling) {
	f := r.fresh()
	cpu, _ := r.totals()
	s := f.seconds(small, huge)
	fmt.Fprintf(b.w, "fresh: %s: %s in 4 KiB pages, %s in huge pages: ~%.2f CPU s at these rates, %.0f%% of its CPU s\n",
		r.name, job.FormatBytes(f.smallFaults*touchStride), job.FormatBytes(f.hugeFaults*offheap.HugePageBytes), s, 100*s/max(cpu, 1e-9))
}

// footnote says what the columns mean.
func (b *bench) footnote() {
	fmt.Fprintf(b.w, "\nMB/s: bytes over put+barrier plus read. ratio: MB/s over the slowest network ceiling")
	if b.pqBound.Name != "" {
		fmt.Fprintf(b.w, "; for merge and set-index, over the Parquet bound (read + write on every core)")
	}
	fmt.Fprintln(b.w, ".")
	fmt.Fprintf(b.w, "CPU s: user+system seconds of every process. peak RSS: VmHWM of this process")
	if b.procs != nil {
		fmt.Fprintf(b.w, " (the client); serve-N: each serve process's CPU s, VmHWM and faults")
	}
	fmt.Fprintln(b.w, ".")
	fmt.Fprintln(b.w, "faults: minor page faults of every process, in thousands: mostly memory touched for the first time.")
	fmt.Fprintln(b.w, "first touch: a fresh mapping written once per 4 KiB page, measured after the jobs and a pause: what memory the host took back costs.")
	fmt.Fprintln(b.w, "fresh: each job's minor faults (huge pages: the machine's, during the job) at those rates; an estimate.")
}

// bench is one run of Bench.
type bench struct {
	cfg   BenchConfig
	w     io.Writer
	procs *Procs
	bound Ceiling // the slowest network ceiling: every job's data crosses both
	// pqBound is the Parquet bound (ParquetBound) of the jobs that read and
	// write Parquet, when any runs.
	pqBound Ceiling
	rows    []benchRow // the jobs printed so far
	// hugeMark is HugeFaults when the running job proper started (after
	// its preparation, if any).
	hugeMark int64
}

// open starts the serve processes, if any.
func (b *bench) open(ctx context.Context) error {
	where := fmt.Sprintf("%d in-process nodes", b.cfg.Cluster.Nodes)
	if b.cfg.Procs.Processes > 0 {
		pc := b.cfg.Procs
		if pc.OutputRoots == nil {
			// the jobs' output files, as on a shared file system
			pc.OutputRoots = []string{cmp.Or(b.cfg.TempDir, os.TempDir())}
		}
		if pc.InputRoots == nil {
			pc.InputRoots = []string{cmp.Or(b.cfg.TempDir, os.TempDir())} // and their input files
		}
		p, err := StartProcs(ctx, pc)
		if err != nil {
			return err
		}
		b.procs, b.cfg.Cluster.Addr = p, p.Addr()
		where = fmt.Sprintf("%d serve processes (pids %v)", b.cfg.Procs.Processes, p.PIDs())
	}
	fmt.Fprintf(b.w, "shufflenode bench: %s, memory limit %s per node, %d CPUs, scale %g\n\n",
		where, job.FormatBytes(b.memoryLimit()), runtime.NumCPU(), b.cfg.Scale)
	return nil
}

func (b *bench) memoryLimit() int64 {
	if b.procs != nil {
		return b.cfg.Procs.MemoryLimit
	}
	return b.cfg.Cluster.MemoryLimit
}

func (b *bench) close() {
	if b.procs != nil {
		b.procs.Close()
	}
}

// ceilingBytes is the most bytes a ceiling moves: enough for a steady
// rate. Scaled past it (--quick 16 for merge and set-index), the ceilings
// took ~15 s of the bench, moving 8 GiB each for the same rates.
const ceilingBytes = 500 << 20

// ceilingBytes is what each ceiling moves: the demo's bytes, at most
// ceilingBytes.
func (b *bench) ceilingBytes() int64 { return min(b.scaled(500<<20), ceilingBytes) }

// ceilings measures and prints the ceilings over b.ceilingBytes().
func (b *bench) ceilings(ctx context.Context) error {
	cs, err := Ceilings(ctx, b.ceilingBytes())
	if err != nil {
		return err
	}
	fmt.Fprintf(b.w, "%-*s %10s %11s %7s %8s\n", nameWidth, "ceiling", "bytes", "seconds", "", "MB/s")
	for i, c := range cs {
		b.printCeiling(c)
		if i > 0 && (b.bound.Name == "" || c.MBps() < b.bound.MBps()) {
			b.bound = c
		}
	}
	if slices.Contains(b.cfg.Jobs, "merge") || slices.Contains(b.cfg.Jobs, "setindex") {
		w, r, err := ParquetCeilings(ctx, cmp.Or(b.cfg.TempDir, os.TempDir()), min(b.scaled(16<<20), 256<<20))
		if err != nil {
			return err
		}
		b.pqBound = ParquetBound(w, r, runtime.NumCPU())
		for _, c := range []Ceiling{w, r, b.pqBound} {
			b.printCeiling(c)
		}
	}
	fmt.Fprintln(b.w)
	return nil
}

func (b *bench) printCeiling(c Ceiling) {
	fmt.Fprintf(b.w, "%-*s %10s %11.2f %7s %8.1f\n", nameWidth, c.Name, job.FormatBytes(c.Bytes), c.Seconds, "", c.MBps())
}

// scaled is n times the scale, at least 1.
func (b *bench) scaled(n int64) int64 { return max(1, int64(math.Round(float64(n)*b.cfg.Scale))) }

// parts is the task and partition count: 1000 at full scale, fewer (at
// least 4) for small runs.
func (b *bench) parts() int { return int(max(4, min(1000, b.scaled(1000)))) }

func (b *bench) header() {
	fmt.Fprintf(b.w, "%-*s %10s %11s %7s %8s %7s %10s %7s %6s  %s\n", b.jobWidth(),
		"job", "bytes", "put+barrier", "read", "MB/s", "CPU s", "peak RSS", "faults", "ratio", "of")
}

// repeat runs one job Repeat times, each run a row; in-process, all on one
// cluster (shareCluster).
func (b *bench) repeat(ctx context.Context, job func(context.Context) (benchRow, error)) error {
	n := b.cfg.Repeat
	if n > 1 && b.procs == nil {
		done, err := b.shareCluster(ctx)
		if err != nil {
			return err
		}
		defer done()
	}
	for i := range n {
		if err := b.run(ctx, job, i); err != nil {
			return err
		}
	}
	return nil
}

// shareCluster starts an in-process cluster for the runs of one job to
// share and points the jobs at it, as at a running cluster (its nodes may
// read and write the jobs' files under TempDir, as serve processes may);
// done stops it and points the jobs back at a cluster of their own.
func (b *bench) shareCluster(ctx context.Context) (done func(), err error) {
	cc := b.cfg.Cluster
	cc.OutputRoots = []string{cmp.Or(b.cfg.TempDir, os.TempDir())}
	cc.InputRoots = cc.OutputRoots
	cl, err := job.OpenCluster(ctx, cc)
	if err != nil { // it stopped what it started
		return nil, err
	}
	b.cfg.Cluster.Addr = cl.Addrs[0]
	return func() {
		b.cfg.Cluster.Addr = ""
		cl.Close()
	}, nil
}

// run runs one job (run i of Repeat) between usage snapshots and prints
// its row.
func (b *bench) run(ctx context.Context, job func(context.Context) (benchRow, error), i int) error {
	debug.FreeOSMemory() // collects first
	before := b.procUsage(true)
	m := measure.StartMeter()
	b.hugeMark = HugeFaults()
	row, err := job(ctx)
	if err != nil {
		return err
	}
	row.usage, row.huge = m.Stop().Sub(row.prep), HugeFaults()-b.hugeMark
	if b.cfg.Repeat > 1 {
		row.name = fmt.Sprintf("%s #%d", row.name, i+1)
	}
	for i, u := range b.procUsage(false) {
		row.procs = append(row.procs, u.Sub(before[i]))
	}
	b.print(row)
	b.rows = append(b.rows, row)
	return nil
}

// nameWidth is the width of the first column of the ceilings' and the
// jobs' tables: the longest ceiling's or job's name.
const nameWidth = 46

// jobWidth is the width of the job column: nameWidth, and the run numbers
// Repeat adds to the names.
func (b *bench) jobWidth() int {
	if b.cfg.Repeat > 1 {
		return nameWidth + len(fmt.Sprintf(" #%d", b.cfg.Repeat))
	}
	return nameWidth
}

// kilo formats a count in thousands ("412k").
func kilo(n int64) string { return fmt.Sprintf("%dk", (n+500)/1000) }

// procUsage reads every serve process's usage; reset also resets their
// peak RSS where the kernel allows it.
func (b *bench) procUsage(reset bool) []measure.Usage {
	if b.procs == nil {
		return nil
	}
	var out []measure.Usage
	for _, pid := range b.procs.PIDs() {
		if reset {
			_ = measure.ResetPeakRSSOf(pid)
		}
		out = append(out, measure.ProcUsage(pid))
	}
	return out
}

// print writes a job's row, and one line per serve process.
func (b *bench) print(r benchRow) {
	cpu, faults := r.totals()
	mbps := float64(r.bytes) / 1e6 / (r.put + r.read)
	bound := b.bound
	if r.parquet {
		bound = b.pqBound
	}
	fmt.Fprintf(b.w, "%-*s %10s %11.2f %7.2f %8.1f %7.1f %10s %7s %6.2f  %s\n", b.jobWidth(), r.name, job.FormatBytes(r.bytes),
		r.put, r.read, mbps, cpu, job.FormatBytes(r.usage.PeakRSS), kilo(faults), mbps/bound.MBps(), bound.Short())
	for i, p := range r.procs {
		fmt.Fprintf(b.w, "  %-*s %10s %11s %7s %8s %7.1f %10s %7s\n", b.jobWidth()-2, fmt.Sprintf("serve-%d", i), "", "", "", "", p.CPUSeconds, job.FormatBytes(p.PeakRSS), kilo(p.MinorFaults))
	}
}
