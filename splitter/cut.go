package splitter

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/mempool"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/table"
)

// ArrayEntryBytes is the size at which a destination's pieces of one old
// chunk are handed to the queue as one entry.
const ArrayEntryBytes = 1 << 20

// Route says where one attempt's shards go.
type Route struct {
	Shuffle string
	Epoch   uint64
	Task    uint64
	Attempt uint32
	// Dests are the nodes, by index; the maps below index into it.
	Dests []string
	// Primary maps each output partition to its owner's index in Dests;
	// len(Dests) means nobody (a replay that need not send it).
	Primary []int
	// Backups maps each partition to its backup's index in Dests, or
	// len(Dests) for none; nil without replication.
	Backups []int
	// Holders, when set, makes the cut sum the rows of each output
	// partition of a dataframe (table.RowSums) and send each destination,
	// with its end marker, the sums of the partitions it holds in the
	// attempt's epoch, whether their rows were sent to it or not: a replay
	// sends only what moved, and the receivers of the rest compare.
	Holders *Holders
}

// Holders says which destinations hold each output partition in an
// attempt's epoch (shuffle.Route's GroupOf and BackupOf), whatever a
// replay sends them.
type Holders struct {
	// Owner is each partition's owner's index in Dests.
	Owner []int
	// Backup is each partition's backup's index in Dests, negative for
	// none; nil without replication.
	Backup []int
}

// Frame is how a dataframe shuffle cuts record batches.
type Frame struct {
	Partitioner *table.Partitioner
	Codec       *table.Codec
}

// Cut is the send side of one input task attempt: it cuts the attempt's
// input into shards, gathers them into one entry per destination node and
// hands the entries to the splitter's queues; at the end it sends an
// end-of-task marker to every live destination. It numbers the entries per
// destination (the receivers' dedup key) and sums what it sent to each (the
// totals the barrier checks). A Cut is used by one goroutine.
type Cut struct {
	s    *Splitter
	r    Route
	seq  []uint32            // entries sent, per destination index
	sent []barrier.Totals    // totals sent, per destination index
	pids []uint32            // scratch: partition of each row
	sums table.SparseRowSums // per partition that got rows, when Route.Holders is set
	// cutting is this Cut's place among its shuffle's Cuts being cut; it
	// leaves it once, at End or Close.
	cutting *cutting
}

// NewCut starts cutting one attempt along r. End it, or Close it when the
// attempt is abandoned.
func (s *Splitter) NewCut(r Route) *Cut {
	c := &Cut{s: s, r: r, seq: make([]uint32, len(r.Dests)), sent: make([]barrier.Totals, len(r.Dests)),
		cutting: s.enter(r.Shuffle)}
	if r.Holders != nil {
		c.sums.Dense(len(r.Primary)) // an entry per partition, for a task of many rows
	}
	return c
}

// Record partitions rec's rows and sends them to their owners (and backups).
// The caller keeps ownership of rec.
func (c *Cut) Record(ctx context.Context, f Frame, rec arrow.Record) error {
	var err error
	if c.pids, err = f.Partitioner.Partition(rec, c.pids); err != nil {
		return fmt.Errorf("%w: shuffle %s task %d: %w", ErrBadInput, c.r.Shuffle, c.r.Task, err)
	}
	if c.r.Holders != nil {
		if err := c.sums.Add(rec, c.pids); err != nil {
			return fmt.Errorf("%w: shuffle %s task %d: %w", ErrBadInput, c.r.Shuffle, c.r.Task, err)
		}
	}
	if err := c.split(ctx, f, rec, c.r.Primary); err != nil {
		return err
	}
	if c.r.Backups != nil {
		return c.split(ctx, f, rec, c.r.Backups) // replication 2: the same rows to each backup
	}
	return nil
}

// split gathers rec's rows per destination (groupOf: partition ->
// destination index, len(Dests) for none) and sends each group.
func (c *Cut) split(ctx context.Context, f Frame, rec arrow.Record, groupOf []int) error {
	groups, err := table.Split(&c.s.pool, rec, c.pids, groupOf, len(c.r.Dests)+1)
	if err != nil {
		return fmt.Errorf("shuffle %s task %d: %w", c.r.Shuffle, c.r.Task, err)
	}
	for dest, g := range groups {
		if g.Rec == nil {
			continue
		}
		if dest == len(c.r.Dests) || g.Rec.NumRows() == 0 {
			g.Rec.Release() // rows for nobody, or none
			continue
		}
		if err = c.sendGroup(ctx, f.Codec, dest, g); err != nil {
			table.ReleaseGroups(groups[dest+1:])
			return err
		}
	}
	return nil
}

// sendGroup encodes one destination's rows and queues them as one entry,
// which takes over g.Rec. The entry holds the group's buffers by reference
// (table.RecordParts): the frame that carries them is written from them,
// with no copy into an encoded buffer first, and the record is released once
// that frame was sent (or given up).
func (c *Cut) sendGroup(ctx context.Context, codec *table.Codec, dest int, g table.Group) error {
	parts, err := codec.RecordParts(g.Rec)
	if err != nil {
		g.Rec.Release()
		return fmt.Errorf("shuffle %s task %d: encoding: %w", c.r.Shuffle, c.r.Task, err)
	}
	runs := make([]shard.Run, len(g.Runs))
	for i, r := range g.Runs {
		runs[i] = shard.Run{Partition: r.Partition, Count: uint64(r.Rows)}
	}
	return c.queueReleased(ctx, dest, shard.Entry{Runs: runs, Parts: parts}, uint64(g.Rec.NumRows()), g.Rec.Release)
}

// Chunk cuts old chunk src (the attempt's task, a C-order index into the
// plan's old grid) into its ndsplits, lazily, and queues them as entries of
// about ArrayEntryBytes per destination. Each piece is self-describing (see
// rechunk.AppendPiece); an entry's "rows" are its bytes.
func (c *Cut) Chunk(ctx context.Context, plan *splitaxes.Plan, src rechunk.Chunk) error {
	old := splitaxes.Unravel(int(c.r.Task), plan.OldGrid())
	splits, err := plan.NDSplitsReused(old) // each cut before the next
	if err != nil {
		return fmt.Errorf("%w: shuffle %s task %d: %w", ErrBadInput, c.r.Shuffle, c.r.Task, err)
	}
	pieces, _ := plan.NumSplits(old)
	b := newPieceBufs(&c.s.pool, len(c.r.Dests), c.pieceGuess(len(src.Data)), c.runsGuess(pieces))
	grid := plan.NewGrid()
	for nd := range splits {
		part := splitaxes.Ravel(nd.NewChunk, grid)
		dests, n := c.destinations(part)
		for _, dest := range dests[:n] {
			if err := b.add(dest, uint32(part), src, nd); err != nil {
				return fmt.Errorf("shuffle %s task %d: cutting new chunk %v: %w", c.r.Shuffle, c.r.Task, nd.NewChunk, err)
			}
			if b.full(dest) {
				if err := c.sendPieces(ctx, b, dest); err != nil {
					return err
				}
			}
		}
	}
	for dest := range b.runs {
		if err := c.sendPieces(ctx, b, dest); err != nil {
			return err
		}
	}
	return nil
}

// pieceGuess is the capacity to give a destination's piece buffer for an
// old chunk of n bytes: its share of the chunk (twice with backups), with a
// quarter more for piece headers and uneven shares, up to an entry's size,
// so that a buffer seldom moves as it fills.
func (c *Cut) pieceGuess(n int) int {
	copies := 1
	if c.r.Backups != nil {
		copies = 2
	}
	share := n * copies / max(1, len(c.r.Dests))
	return min(share+share/4+4096, ArrayEntryBytes+ArrayEntryBytes/8)
}

// runsGuess is the capacity to give a destination's runs for an old chunk
// of pieces pieces: its share of them (twice with backups), with an eighth
// more for uneven shares.
func (c *Cut) runsGuess(pieces int) int {
	copies := 1
	if c.r.Backups != nil {
		copies = 2
	}
	share := pieces * copies / max(1, len(c.r.Dests))
	return share + share/8 + 1
}

// destinations are the destination indexes a piece of partition part goes
// to, the first n of out: its owner, and its backup with replication 2
// (either left out where the route says nobody). No slice is made per piece.
func (c *Cut) destinations(part int) (out [2]int, n int) {
	none := len(c.r.Dests)
	if d := c.r.Primary[part]; d < none {
		out[n], n = d, n+1
	}
	if c.r.Backups != nil && c.r.Backups[part] < none {
		out[n], n = c.r.Backups[part], n+1
	}
	return out, n
}

// sendPieces queues the pieces buffered for dest, if any, as one entry,
// whose buffer goes back to the pool once the entry was sent (or given up).
func (c *Cut) sendPieces(ctx context.Context, b *pieceBufs, dest int) error {
	if len(b.runs[dest]) == 0 {
		return nil
	}
	data, runs, release := b.take(dest)
	return c.queueReleased(ctx, dest, shard.Entry{Runs: runs, Data: data}, uint64(len(data)), release)
}

// queueReleased numbers entry e of rows rows for dest, counts it and
// queues it; its data lives until release, if any (see
// Splitter.AddReleased).
func (c *Cut) queueReleased(ctx context.Context, dest int, e shard.Entry, rows uint64, release func()) error {
	e.Task, e.Attempt, e.Seq = c.r.Task, c.r.Attempt, c.seq[dest]
	c.seq[dest]++
	e.Sum, e.Summed = shard.ChecksumParts(e.Chunks()), true // while the data is in the cache; the frame's CRC reuses it
	c.sent[dest].Add(rows, uint64(e.Len()), e.Sum)
	return c.s.AddReleased(ctx, c.r.Shuffle, c.r.Epoch, c.r.Dests[dest], e, release)
}

// End sends the end-of-task marker to every destination in live and waits
// until all of them acknowledged it (or ctx ends). An error names the
// shuffle, task and attempt.
func (c *Cut) End(ctx context.Context, live []string) error {
	c.Close() // it adds nothing more: its markers need not wait for it
	acks := make(chan error, len(c.r.Dests))
	want := 0
	sums := c.sumsByDest()
	for dest, node := range c.r.Dests {
		if !contains(live, node) {
			continue
		}
		want++
		end := End{End: shard.End{Task: c.r.Task, Attempt: c.r.Attempt, Pieces: c.seq[dest], Totals: c.sent[dest], Sums: at(sums, dest)},
			Done: func(err error) { acks <- err }}
		if err := c.s.End(c.r.Shuffle, c.r.Epoch, node, end); err != nil {
			acks <- err
		}
	}
	var errs []error
	for range want {
		select {
		case err := <-acks:
			errs = append(errs, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shuffle %s task %d attempt %d: %w", c.r.Shuffle, c.r.Task, c.r.Attempt, err)
	}
	return nil
}

// Close says the attempt adds nothing more (End does so itself); a Cut
// abandoned before its End must be closed, or the markers of the
// shuffle's other tasks on this node wait Config.Linger for it. Close is
// idempotent.
func (c *Cut) Close() { c.cutting.leave() }

// sumsByDest returns, per destination index, the row sums of the
// partitions it holds that got rows (ascending); nil without
// Route.Holders. A partition's sums go to its owner and its backup, looked
// up by partition (a call per partition and destination was 3% of the
// 10,000 x 10,000 demo's CPU).
func (c *Cut) sumsByDest() [][]shard.PartSum {
	h := c.r.Holders
	if h == nil || len(c.r.Dests) == 0 {
		return nil
	}
	out := make([][]shard.PartSum, len(c.r.Dests))
	n := c.sums.Len()
	each := n/len(out) + n/(4*len(out)) + 16 // a share and some
	for i := range out {
		out[i] = make([]shard.PartSum, 0, each)
	}
	c.sums.Each(func(p uint32, rows, sum uint64) {
		ps := shard.PartSum{Partition: p, Rows: rows, Sum: sum}
		owner := -1
		if int(p) < len(h.Owner) {
			owner = h.Owner[p]
			if owner >= 0 && owner < len(out) {
				out[owner] = append(out[owner], ps)
			}
		}
		if int(p) < len(h.Backup) {
			if b := h.Backup[p]; b >= 0 && b < len(out) && b != owner {
				out[b] = append(out[b], ps)
			}
		}
	})
	return out
}

func at[T any](s [][]T, i int) []T {
	if s == nil {
		return nil
	}
	return s[i]
}

// Sent returns what was sent to each destination in live, by name.
func (c *Cut) Sent(live []string) map[string]barrier.Totals {
	out := make(map[string]barrier.Totals, len(live))
	for i, n := range c.r.Dests {
		if contains(live, n) {
			out[n] = c.sent[i]
		}
	}
	return out
}

// Totals sums the rows and bytes sent to every destination.
func (c *Cut) Totals() (rows, bytes uint64) {
	for _, t := range c.sent {
		rows += t.Rows
		bytes += t.Bytes
	}
	return rows, bytes
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pieceBufs are the array pieces of one old chunk being gathered per
// destination. A destination's buffer comes from the splitter's pool and
// goes back to it once the entry that carries it was sent: a rechunk of
// 1000 old chunks to 4 nodes otherwise allocated a fresh buffer of a
// quarter chunk per old chunk and destination (1 GB for the bench's array),
// which the collector then cleared and collected.
type pieceBufs struct {
	pool  *mempool.Pool
	data  [][]byte
	from  [][]byte // the pool's buffer behind data, until data outgrows it
	runs  [][]shard.Run
	guess int // the capacity a destination's buffer starts with
	// runsGuess is the capacity a destination's runs start with: grown
	// from nothing a run at a time, they were reallocated about nine times
	// per destination of an old chunk of 1,000 one-element pieces (63
	// allocations per cut, 31 with the guess; the same time).
	runsGuess int
}

// maxRunsGuess bounds pieceBufs.runsGuess (16 bytes a run).
const maxRunsGuess = 1 << 16

func newPieceBufs(pool *mempool.Pool, n, guess, runsGuess int) *pieceBufs {
	return &pieceBufs{pool: pool, data: make([][]byte, n), from: make([][]byte, n), runs: make([][]shard.Run, n), guess: guess,
		runsGuess: min(max(runsGuess, 1), maxRunsGuess)}
}

// add appends the piece of src that nd selects (gathered along run axes),
// for partition part.
func (b *pieceBufs) add(dest int, part uint32, src rechunk.Chunk, nd splitaxes.NDSplit) error {
	if b.data[dest] == nil {
		b.from[dest] = b.pool.AllocateDirty(b.guess) // every byte of a piece is written
		b.data[dest] = b.from[dest][:0]
		b.runs[dest] = make([]shard.Run, 0, b.runsGuess)
	}
	start := len(b.data[dest])
	var err error
	if b.data[dest], err = rechunk.AppendGathered(b.data[dest], src, nd.Slices, nd.Segs); err != nil {
		return err
	}
	b.runs[dest] = append(b.runs[dest], shard.Run{Partition: part, Count: uint64(len(b.data[dest]) - start)})
	return nil
}

func (b *pieceBufs) full(dest int) bool { return len(b.data[dest]) >= ArrayEntryBytes }

// take hands over dest's buffer and runs, and a release that gives the
// buffer back to the pool (nil when the pieces outgrew the pool's buffer:
// append moved them to Go memory, which the collector reclaims).
func (b *pieceBufs) take(dest int) ([]byte, []shard.Run, func()) {
	data, runs, from := b.data[dest], b.runs[dest], b.from[dest]
	b.data[dest], b.runs[dest], b.from[dest] = nil, nil, nil
	if unsafe.SliceData(data) != unsafe.SliceData(from) {
		return data, runs, nil
	}
	return data, runs, func() { b.pool.Free(from) }
}
