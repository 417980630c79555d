package service

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PutResult says what a put did.
type PutResult struct {
	Rows, Bytes uint64
	// Skipped: the task already had a done attempt; nothing was sent.
	Skipped bool
}

// Put runs one input task attempt on this node: schema is the input's
// schema (checked before anything is registered or sent), next yields its
// record batches (io.EOF ends the input; the caller keeps ownership of each
// record).
// Put returns once every receiver acknowledged the task's data and the
// coordinator recorded it done. A failed put leaves nothing committed: the
// caller may retry with a higher attempt number.
func (s *Service) Put(ctx context.Context, id string, task uint64, attempt uint32, schema *arrow.Schema, next func() (arrow.Record, error)) (PutResult, error) {
	sh, err := s.lookup(id)
	if err != nil {
		return PutResult{}, err
	}
	if sh.array != nil {
		return PutResult{}, fmt.Errorf("%w: shuffle %s is an array rechunk: put chunks, not record batches", ErrBadInput, id)
	}
	if task >= uint64(sh.spec.Tasks) {
		return PutResult{}, fmt.Errorf("%w: shuffle %s: task %d out of range 0..%d", ErrBadInput, id, task, sh.spec.Tasks-1)
	}
	if err := sh.checkSchema(task, schema); err != nil {
		return PutResult{}, err
	}
	return s.putWith(ctx, sh, task, attempt, func(p *putter) error { return p.feed(ctx, next) })
}

// putWith runs one attempt of any kind: feed cuts the input and hands its
// entries to the splitter.
func (s *Service) putWith(ctx context.Context, sh *shuffle, task uint64, attempt uint32, feed func(*putter) error) (PutResult, error) {
	if err := sh.openErr(); err != nil {
		return PutResult{}, err
	}
	sh.touch()
	k := attemptKey{task, attempt}
	if err := sh.startPut(k); err != nil {
		return PutResult{}, err
	}
	res, err := s.put(ctx, sh, k, feed)
	sh.endPut(k, err == nil)
	if err != nil {
		s.log.Warn("put failed", "shuffle", sh.id(), "task", task, "attempt", attempt, "err", err)
	}
	return res, err
}

// checkSchema refuses input whose schema is not the shuffle's.
func (sh *shuffle) checkSchema(task uint64, schema *arrow.Schema) error {
	if schema != nil && !schema.Equal(sh.schema) {
		return fmt.Errorf("%w: shuffle %s task %d: input schema %s does not match the shuffle's schema %s",
			ErrBadInput, sh.id(), task, schema, sh.schema)
	}
	return nil
}

// startPut registers a local put of k, refusing a second concurrent one.
func (sh *shuffle) startPut(k attemptKey) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if done, ok := sh.puts[k]; ok {
		state := "running"
		if done {
			state = "finished"
		}
		return fmt.Errorf("%w: shuffle %s task %d attempt %d is already %s on this node", ErrConflict, sh.id(), k.task, k.attempt, state)
	}
	sh.puts[k] = false
	return nil
}

func (sh *shuffle) endPut(k attemptKey, ok bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if ok {
		sh.puts[k] = true
	} else {
		delete(sh.puts, k)
	}
}

// put registers with the coordinator, streams the input and reports done.
// The whole attempt runs in one epoch: if the epoch moves meanwhile, the
// attempt fails with ErrStaleEpoch and the caller runs a new one.
func (s *Service) put(ctx context.Context, sh *shuffle, k attemptKey, feed func(*putter) error) (PutResult, error) {
	rt := sh.routing()
	r, err := s.control(ctx, sh.coordinator, control{Op: opBegin, Shuffle: sh.id(), Epoch: rt.epoch, Node: s.Name(), Task: k.task, Attempt: k.attempt})
	if err != nil {
		return PutResult{}, staleOr(err)
	}
	switch r.Status {
	case statusDone:
		return PutResult{Skipped: true}, nil
	case statusConflict:
		return PutResult{}, fmt.Errorf("%w: %s", ErrConflict, r.Reason)
	case statusStale:
		return PutResult{}, fmt.Errorf("%w: %s", ErrStaleEpoch, r.Reason)
	}
	p := &putter{s: s, sh: sh, rt: rt, k: k, seq: make([]uint32, len(sh.members)), sent: make([]barrier.Totals, len(sh.members)),
		primary: rt.groupOf, backups: backupGroups(rt, len(sh.members))}
	if r.Since > 0 {
		if err := p.sendOnlyMoved(r.Since - 1); err != nil {
			return PutResult{}, err
		}
	}
	if err := feed(p); err != nil {
		return p.result(), staleOr(err)
	}
	if err := p.finish(ctx); err != nil {
		return p.result(), staleOr(err)
	}
	return p.result(), nil
}

// backupGroups maps each partition to its backup's member index, or to
// none (n) where it has no live backup; nil without replication.
func backupGroups(rt *route, n int) []int {
	if rt.backupOf == nil {
		return nil
	}
	out := make([]int, len(rt.backupOf))
	for p, b := range rt.backupOf {
		out[p] = n
		if b >= 0 {
			out[p] = b
		}
	}
	return out
}

// sendOnlyMoved makes a replay send only what moved: a partition's owner
// or backup that already held it in epoch since (when the replayed attempt
// was done) committed that attempt's rows of it and keeps them, so it gets
// none of this attempt's rows; it still gets the end marker.
func (p *putter) sendOnlyMoved(since uint64) error {
	if since >= p.rt.epoch {
		return fmt.Errorf("%w: shuffle %s task %d attempt %d replays epoch %d, not older than %d",
			ErrBadInput, p.sh.id(), p.k.task, p.k.attempt, since, p.rt.epoch)
	}
	prev, err := p.sh.routeFor(p.rt.lost[:since])
	if err != nil {
		return err
	}
	none := len(p.sh.members)
	p.primary = slices.Clone(p.primary)
	for part, dest := range p.primary {
		if prev.holds(part, dest) {
			p.primary[part] = none
		}
		if p.backups != nil && prev.holds(part, p.backups[part]) {
			p.backups[part] = none
		}
	}
	return nil
}

// holds reports whether member index m held partition part in this
// route: as its owner or its backup.
func (r *route) holds(part, m int) bool {
	return r.groupOf[part] == m || (r.backupOf != nil && r.backupOf[part] == m)
}

// staleOr marks err as ErrStaleEpoch if it was caused by an epoch change
// (the splitter's queues were forgotten, or a peer refused a stale epoch).
func staleOr(err error) error {
	code, _ := wire.RefusalCodeOf(err)
	if errors.Is(err, splitter.ErrForgotten) || code == wire.RefuseStaleEpoch {
		if !errors.Is(err, ErrStaleEpoch) {
			return fmt.Errorf("%w: %w", ErrStaleEpoch, err)
		}
	}
	return err
}

// putter cuts one task attempt into entries per destination.
type putter struct {
	s       *Service
	sh      *shuffle
	rt      *route // the epoch the attempt runs in
	primary []int  // partition -> owner's member index (len(members) for none)
	backups []int  // replication 2: partition -> backup member index (len(members) for none)
	k       attemptKey
	pids    []uint32
	seq     []uint32         // entries sent, per member index
	sent    []barrier.Totals // totals sent, per member index
}

// feed reads every record of the input and sends its rows.
func (p *putter) feed(ctx context.Context, next func() (arrow.Record, error)) error {
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("shuffle %s task %d attempt %d: reading input: %w", p.sh.id(), p.k.task, p.k.attempt, err)
		}
		if err := p.add(ctx, rec); err != nil {
			return err
		}
	}
}

// add partitions one record and hands its groups to the splitter.
func (p *putter) add(ctx context.Context, rec arrow.Record) error {
	sh := p.sh
	if err := sh.checkSchema(p.k.task, rec.Schema()); err != nil {
		return err
	}
	var err error
	if p.pids, err = sh.part.Partition(rec, p.pids); err != nil {
		return fmt.Errorf("%w: shuffle %s task %d: %w", ErrBadInput, sh.id(), p.k.task, err)
	}
	if err := p.split(ctx, rec, p.primary); err != nil {
		return err
	}
	if p.backups != nil {
		return p.split(ctx, rec, p.backups) // replication 2: the same rows to each backup
	}
	return nil
}

// split gathers rec's rows per destination (groupOf: partition -> member
// index; len(members) means none) and sends each group.
func (p *putter) split(ctx context.Context, rec arrow.Record, groupOf []int) error {
	sh := p.sh
	groups, err := table.Split(p.s.cfg.Allocator, rec, p.pids, groupOf, len(sh.members)+1)
	if err != nil {
		return fmt.Errorf("shuffle %s task %d: %w", sh.id(), p.k.task, err)
	}
	defer releaseGroups(groups)
	for dest, g := range groups[:len(sh.members)] {
		if g.Rec == nil || g.Rec.NumRows() == 0 {
			continue
		}
		if err := p.send(ctx, dest, g); err != nil {
			return err
		}
	}
	return nil
}

// send encodes one group and adds it to the destination's buffer.
func (p *putter) send(ctx context.Context, dest int, g table.Group) error {
	data, err := p.sh.codec.AppendRecord(nil, g.Rec)
	if err != nil {
		return fmt.Errorf("shuffle %s task %d: encoding: %w", p.sh.id(), p.k.task, err)
	}
	runs := make([]shard.Run, len(g.Runs))
	for i, r := range g.Runs {
		runs[i] = shard.Run{Partition: r.Partition, Count: uint64(r.Rows)}
	}
	e := shard.Entry{Task: p.k.task, Attempt: p.k.attempt, Seq: p.seq[dest], Runs: runs, Data: data}
	p.seq[dest]++
	p.sent[dest].Add(uint64(g.Rec.NumRows()), uint64(len(data)), crc32.Checksum(data, castagnoli))
	return p.s.split.Add(ctx, p.sh.id(), p.rt.epoch, p.sh.members[dest], e)
}

func releaseGroups(gs []table.Group) {
	for _, g := range gs {
		if g.Rec != nil {
			g.Rec.Release()
		}
	}
}

// finish sends the end markers to every live member, waits for them, and
// reports the task done.
func (p *putter) finish(ctx context.Context) error {
	sh := p.sh
	acks := make(chan error, len(sh.members))
	for dest, node := range sh.members {
		if !slices.Contains(p.rt.live, node) {
			continue
		}
		end := splitter.End{End: shard.End{Task: p.k.task, Attempt: p.k.attempt, Pieces: p.seq[dest], Totals: p.sent[dest]},
			Done: func(err error) { acks <- err }}
		if err := p.s.split.End(sh.id(), p.rt.epoch, node, end); err != nil {
			acks <- err
		}
	}
	var errs []error
	for range p.rt.live {
		select {
		case err := <-acks:
			errs = append(errs, err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shuffle %s task %d attempt %d: %w", sh.id(), p.k.task, p.k.attempt, err)
	}
	return p.reportDone(ctx)
}

// reportDone tells the coordinator what the attempt sent to each receiver.
func (p *putter) reportDone(ctx context.Context) error {
	sent := make(map[string]barrier.Totals, len(p.rt.live))
	for i, n := range p.sh.members {
		if slices.Contains(p.rt.live, n) {
			sent[n] = p.sent[i]
		}
	}
	c := control{Op: opDone, Shuffle: p.sh.id(), Epoch: p.rt.epoch, Node: p.s.Name(), Task: p.k.task, Attempt: p.k.attempt, Sent: sent}
	return p.s.retry(ctx, 5, func() error { _, err := p.s.control(ctx, p.sh.coordinator, c); return err })
}

// result sums what was sent.
func (p *putter) result() PutResult {
	var r PutResult
	for _, t := range p.sent {
		r.Rows += t.Rows
		r.Bytes += t.Bytes
	}
	return r
}
