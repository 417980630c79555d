package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/splitter"
	"github.com/shufflenode/shufflenode/wire"
)

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
	r, err := s.request(ctx, sh.coordinator, control.Msg{Op: control.OpBegin, Shuffle: sh.id(), Epoch: rt.epoch, Node: s.Name(), Task: k.task, Attempt: k.attempt})
	if err != nil {
		return PutResult{}, staleOr(err)
	}
	switch r.Status {
	case control.StatusDone:
		return PutResult{Skipped: true}, nil
	case control.StatusConflict:
		return PutResult{}, fmt.Errorf("%w: %s", ErrConflict, r.Reason)
	case control.StatusStale:
		return PutResult{}, fmt.Errorf("%w: %s", ErrStaleEpoch, r.Reason)
	}
	route := splitter.Route{Shuffle: sh.id(), Epoch: rt.epoch, Task: k.task, Attempt: k.attempt, Dests: sh.members,
		Primary: rt.groupOf, Backups: backupGroups(rt, len(sh.members))}
	if r.Since > 0 {
		if err := sh.sendOnlyMoved(&route, rt, r.Since-1); err != nil {
			return PutResult{}, err
		}
	}
	p := &putter{s: s, sh: sh, rt: rt, k: k, cut: s.split.NewCut(route)}
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

// sendOnlyMoved makes a replay (routed by r) send only what moved: a partition's owner
// or backup that already held it in epoch since (when the replayed attempt
// was done) committed that attempt's rows of it and keeps them, so it gets
// none of this attempt's rows; it still gets the end marker.
func (sh *shuffle) sendOnlyMoved(r *splitter.Route, rt *route, since uint64) error {
	if since >= rt.epoch {
		return fmt.Errorf("%w: shuffle %s task %d attempt %d replays epoch %d, not older than %d",
			ErrBadInput, sh.id(), r.Task, r.Attempt, since, rt.epoch)
	}
	prev, err := sh.routeFor(rt.lost[:since])
	if err != nil {
		return err
	}
	none := len(sh.members)
	r.Primary = slices.Clone(r.Primary)
	for part, dest := range r.Primary {
		if prev.holds(part, dest) {
			r.Primary[part] = none
		}
		if r.Backups != nil && prev.holds(part, r.Backups[part]) {
			r.Backups[part] = none
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

// putter runs one task attempt on this node: the splitter's Cut does the
// cutting and sending; the putter adds the coordinator's part (begin, done)
// and the input's checks.
type putter struct {
	s   *Service
	sh  *shuffle
	rt  *route // the epoch the attempt runs in
	k   attemptKey
	cut *splitter.Cut
}

// frame is how this shuffle's record batches are cut.
func (p *putter) frame() splitter.Frame {
	return splitter.Frame{Partitioner: p.sh.part, Codec: p.sh.codec, Allocator: p.s.cfg.Allocator}
}

// feed reads every record of the input and sends its rows.
func (p *putter) feed(ctx context.Context, next func() (arrow.Record, error)) error {
	f := p.frame()
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("shuffle %s task %d attempt %d: reading input: %w", p.sh.id(), p.k.task, p.k.attempt, err)
		}
		if err := p.sh.checkSchema(p.k.task, rec.Schema()); err != nil {
			return err
		}
		if err := p.cut.Record(ctx, f, rec); err != nil {
			return badInputOr(err)
		}
	}
}

// badInputOr marks the splitter's bad-input errors as the service's.
func badInputOr(err error) error {
	if errors.Is(err, splitter.ErrBadInput) {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return err
}

// finish sends the end markers to every live member, waits for them, and
// reports the task done.
func (p *putter) finish(ctx context.Context) error {
	if err := p.cut.End(ctx, p.rt.live); err != nil {
		return err
	}
	return p.reportDone(ctx)
}

// reportDone tells the coordinator what the attempt sent to each receiver.
func (p *putter) reportDone(ctx context.Context) error {
	c := control.Msg{Op: control.OpDone, Shuffle: p.sh.id(), Epoch: p.rt.epoch, Node: p.s.Name(), Task: p.k.task, Attempt: p.k.attempt, Sent: p.cut.Sent(p.rt.live)}
	return control.Retry(ctx, 5, func() error { _, err := p.s.request(ctx, p.sh.coordinator, c); return err })
}

// result sums what was sent.
func (p *putter) result() PutResult {
	rows, bytes := p.cut.Totals()
	return PutResult{Rows: rows, Bytes: bytes}
}
