package job

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// DemoConfig is a synthetic dataframe shuffle.
type DemoConfig struct {
	ID           string // shuffle ID; default "demo"
	Rows         int64  // total rows
	Tasks        int    // input tasks
	Partitions   int    // output partitions
	PayloadBytes int    // bytes of the name column per row
	Seed         uint64
	// Rule is "hash" (default) or "range" (on the key column, even
	// divisions over KeyCardinality).
	Rule           string
	KeyCardinality int64 // default 1<<40
	Parallel       int   // concurrent puts (default: the client's, 2 per node)
	PutBatch       int   // tasks per put stream (client.Job.PutBatch)
	Replication    int   // 2: every shard also on a backup owner
	ReadParallel   int   // concurrent partition reads (default 2 per node)
	// Auth is the nodes' API TLS settings and token.
	Auth flightproto.ClientAuth
	// Progress, if set, is told each finished input task and output read.
	Progress func(phase string, done, total int)
	// BeforeInput, if set, is called before input task t is produced (each
	// attempt): fault-injection tests kill nodes from here.
	BeforeInput func(task int)
	// BeforeRead, if set, is called before output partition p is read:
	// fault-injection tests kill nodes from here.
	BeforeRead func(partition int)
}

func (c DemoConfig) withDefaults() DemoConfig {
	if c.ID == "" {
		c.ID = "demo"
	}
	if c.Rule == "" {
		c.Rule = "hash"
	}
	if c.KeyCardinality == 0 {
		c.KeyCardinality = 1 << 40
	}
	return c
}

// Report is what a demo run measured.
type Report struct {
	Rows, Bytes    int64
	Tasks          int
	Partitions     int
	Attempts       int64
	Replayed       int64   // task runs the coordinator asked for again
	Epoch          uint64  // nodes lost during the shuffle
	ReplaySet      int     // finished tasks the lost nodes took with them
	ShuffleSeconds float64 // create, puts and barrier
	ReadSeconds    float64 // reading every partition back
	TotalSeconds   float64
}

// MBps is input bytes over shuffle and read time, in 10^6 bytes per second.
func (r Report) MBps() float64 { return float64(r.Bytes) / 1e6 / r.TotalSeconds }

// Spec builds the shuffle spec of a demo.
func (c DemoConfig) Spec() (*spec.Spec, error) {
	c = c.withDefaults()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		return nil, err
	}
	rule := table.Rule{Kind: table.Hash, Columns: []string{"key"}}
	if c.Rule == "range" {
		rule = table.Rule{Kind: table.Range, Columns: []string{"key"}, Divisions: divisions(c.KeyCardinality, c.Partitions)}
	} else if c.Rule != "hash" {
		return nil, fmt.Errorf("job: rule %q: want hash or range", c.Rule)
	}
	return &spec.Spec{ID: c.ID, Kind: spec.Dataframe, Tasks: c.Tasks, Partitions: c.Partitions, Rows: c.Rows,
		Schema: codec.SchemaBytes(), Rule: rule, Replication: c.Replication}, nil
}

// divisions splits [0, card) into p even ranges.
func divisions(card int64, p int) []json.RawMessage {
	d := make([]json.RawMessage, 0, p-1)
	for i := 1; i < p; i++ {
		d = append(d, json.RawMessage(strconv.FormatInt(card/int64(p)*int64(i), 10)))
	}
	return d
}

// RunDemo runs the demo shuffle on the cluster whose API addresses are
// nodes, reads every partition back, verifies it, and closes the shuffle.
func RunDemo(ctx context.Context, nodes []string, c DemoConfig) (Report, error) {
	c = c.withDefaults()
	sp, err := c.Spec()
	if err != nil {
		return Report{}, err
	}
	schema, _ := sp.ArrowSchema()
	part, err := table.NewPartitioner(schema, sp.Rule, sp.Partitions)
	if err != nil {
		return Report{}, err
	}
	gen := table.GenConfig{Rows: c.Rows, Seed: c.Seed, KeyCardinality: c.KeyCardinality, PayloadBytes: c.PayloadBytes}
	v := NewVerifier(part, c.Rows, 1, 0)
	rep := Report{Rows: c.Rows, Tasks: c.Tasks, Partitions: c.Partitions}
	in := newInputs(v, c.Tasks)
	start := time.Now()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: nodes, Parallel: c.Parallel, PutBatch: c.PutBatch, Auth: c.Auth,
		Input: func(t int) ([]arrow.Record, error) {
			if c.BeforeInput != nil {
				c.BeforeInput(t)
			}
			rec := table.GenTask(memory.DefaultAllocator, gen, t, c.Tasks)
			if err := in.expect(t, rec); err != nil {
				rec.Release()
				return nil, err
			}
			return []arrow.Record{rec}, nil
		},
		Progress: progress(c.Progress, "put")})
	rep.Bytes = in.bytes.Load()
	if err != nil {
		return rep, err
	}
	defer res.Close(context.WithoutCancel(ctx))
	rep.ShuffleSeconds = time.Since(start).Seconds()
	readStart := time.Now()
	err = readAll(ctx, res, v, c, len(nodes))
	// Reads that recovered a lost node moved the epoch and replayed tasks.
	rep.Attempts, rep.Replayed, rep.Epoch, rep.ReplaySet = res.Attempts(), res.Replayed(), res.Epoch, res.ReplaySet
	if err != nil {
		return rep, err
	}
	rep.ReadSeconds = time.Since(readStart).Seconds()
	rep.TotalSeconds = time.Since(start).Seconds()
	return rep, v.Check()
}

// inputs feeds each input task to the verifier once, the first time the
// client asks for it (a retried or replayed task is generated again, the
// same rows), and counts the input bytes.
type inputs struct {
	v     *Verifier
	seen  []atomic.Bool
	bytes atomic.Int64
}

func newInputs(v *Verifier, tasks int) *inputs {
	return &inputs{v: v, seen: make([]atomic.Bool, tasks)}
}

func (in *inputs) expect(t int, rec arrow.Record) error {
	if in.seen[t].Swap(true) {
		return nil
	}
	in.bytes.Add(table.RecordBytes(rec))
	return in.v.Input(rec)
}

// readAll reads every partition with bounded parallelism into the verifier:
// a reader takes a group of partitions of one owner (client.Result.ByOwner)
// and reads it in one DoGet, so many small partitions are not as many round
// trips.
func readAll(ctx context.Context, res *client.Result, v *Verifier, c DemoConfig, nodes int) error {
	par := c.ReadParallel
	if par <= 0 {
		par = 2 * nodes
	}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	groups := make(chan []int)
	done := 0
	report := progress(c.Progress, "read")
	ended := func(int) error {
		mu.Lock()
		done++
		report(done, c.Partitions)
		mu.Unlock()
		return nil
	}
	for range par {
		wg.Go(func() {
			for g := range groups {
				err := readGroup(ctx, res, v, c, g, ended)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	for _, g := range ownerGroups(res, c.Partitions, par) {
		groups <- g
	}
	close(groups)
	wg.Wait()
	return firstErr
}

// ownerGroups is partitions 0..n-1 of res in groups of one owner's, each
// read in one DoGet by one of par readers (readGroupSize).
func ownerGroups(res *client.Result, n, par int) [][]int {
	all := make([]int, n)
	for p := range all {
		all[p] = p
	}
	return res.ByOwner(all, readGroupSize(n, par))
}

// readGroupSize is how many partitions one DoGet reads: enough that a
// reader makes few calls, few enough that every reader has groups to read.
func readGroupSize(partitions, readers int) int {
	return min(1024, max(1, partitions/(4*readers)))
}

// readGroup reads one group of partitions (one owner's) into the verifier.
func readGroup(ctx context.Context, res *client.Result, v *Verifier, c DemoConfig, g []int, ended func(int) error) error {
	if c.BeforeRead != nil {
		for _, p := range g {
			c.BeforeRead(p)
		}
	}
	err := res.ReadMany(ctx, g, v.Output, ended)
	if err != nil {
		return fmt.Errorf("job: reading partitions %d..%d (%d of them): %w", g[0], g[len(g)-1], len(g), err)
	}
	return nil
}

func progress(fn func(string, int, int), phase string) func(int, int) {
	return func(done, total int) {
		if fn != nil {
			fn(phase, done, total)
		}
	}
}
