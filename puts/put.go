package puts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
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
func (s *Runner) Put(ctx context.Context, id string, task uint64, attempt uint32, schema *arrow.Schema, next func() (arrow.Record, error)) (PutResult, error) {
	sh, err := s.clientLookup(ctx, id)
	if err != nil {
		return PutResult{}, err
	}
	if sh.Array != nil {
		return PutResult{}, fmt.Errorf("%w: shuffle %s is an array rechunk: put chunks, not record batches", ErrBadInput, id)
	}
	if task >= uint64(sh.Spec.Tasks) {
		return PutResult{}, fmt.Errorf("%w: shuffle %s: task %d out of range 0..%d", ErrBadInput, id, task, sh.Spec.Tasks-1)
	}
	if err := sh.checkSchema(task, schema); err != nil {
		return PutResult{}, err
	}
	return s.putWith(ctx, sh, task, attempt, func(p *putter) error { return p.feed(ctx, next) })
}

// putWith runs one attempt of any kind: feed cuts the input and hands its
// entries to the splitter.
func (s *Runner) putWith(ctx context.Context, sh *Shuffle, task uint64, attempt uint32, feed func(*putter) error) (PutResult, error) {
	k := shuffle.AttemptKey{Task: task, Attempt: attempt}
	if err := s.drainRefusal(sh, k); err != nil {
		return PutResult{}, err
	}
	if err := sh.OpenErr(); err != nil {
		if errors.Is(err, ErrSealed) && s.taskDone(ctx, sh, k) {
			return PutResult{Skipped: true}, nil // an attempt whose reply was lost: it is in
		}
		return PutResult{}, err
	}
	sh.Touch()
	if finished, err := sh.startPut(k); err != nil {
		if finished && s.taskDone(ctx, sh, k) {
			return PutResult{Skipped: true}, nil // this attempt's reply was lost: its task is done
		}
		return PutResult{}, err
	}
	res, err := s.put(ctx, sh, k, feed)
	sh.endPut(k, err == nil)
	if s.afterPut != nil {
		s.afterPut(ctx, sh, err)
	}
	if err != nil {
		s.log.Warn("put failed", "shuffle", sh.ID(), "task", task, "attempt", attempt, "err", err)
	}
	return res, err
}

// checkSchema refuses input whose schema is not the shuffle's.
func (sh *Shuffle) checkSchema(task uint64, schema *arrow.Schema) error {
	if schema != nil && !schema.Equal(sh.Schema) {
		return fmt.Errorf("%w: shuffle %s task %d: input schema %s does not match the shuffle's schema %s",
			ErrBadInput, sh.ID(), task, schema, sh.Schema)
	}
	return nil
}

// startPut registers a local put of k, refusing a second one while k runs
// or after it ran (finished: it ran to its end here; the caller then asks
// whether the task is still done, and if so the put is skipped like any
// put of a done task).
func (sh *Shuffle) startPut(k shuffle.AttemptKey) (finished bool, err error) {
	sh.Lock()
	defer sh.Unlock()
	if done, ok := sh.puts[k]; ok {
		state := "running"
		if done {
			state = "finished"
		}
		return done, fmt.Errorf("%w: shuffle %s task %d attempt %d is already %s on this node", ErrConflict, sh.ID(), k.Task, k.Attempt, state)
	}
	sh.puts[k] = false
	return false, nil
}

func (sh *Shuffle) endPut(k shuffle.AttemptKey, ok bool) {
	sh.Lock()
	defer sh.Unlock()
	if ok {
		sh.puts[k] = true
	} else {
		delete(sh.puts, k)
	}
}

// taskDone asks the coordinator whether k's task has a done attempt: after
// the seal every task has one, and a put the caller saw fail only because
// its replies were lost is then simply done.
// The question is retried like the done report: a lost reply must not turn
// a done task into a refused put.
func (s *Runner) taskDone(ctx context.Context, sh *Shuffle, k shuffle.AttemptKey) bool {
	c := control.Msg{Op: control.OpBegin, Shuffle: sh.ID(), Epoch: sh.Route().Epoch, Node: s.Name(), Task: k.Task, Attempt: k.Attempt}
	var r control.Reply
	err := control.Retry(ctx, 5, func() error {
		var err error
		r, err = s.request(ctx, sh.Coordinator(), c)
		return err
	})
	return err == nil && r.Status == control.StatusDone
}

// put registers with the coordinator, streams the input and reports done.
// The whole attempt runs in one epoch: if the epoch moves meanwhile, the
// attempt fails with ErrStaleEpoch and the caller runs a new one.
func (s *Runner) put(ctx context.Context, sh *Shuffle, k shuffle.AttemptKey, feed func(*putter) error) (PutResult, error) {
	expected := s.split.Expect(sh.ID())
	defer expected()
	rt := sh.Route()
	r, err := s.reportTask(ctx, sh, control.Msg{Op: control.OpBegin, Shuffle: sh.ID(), Epoch: rt.Epoch, Node: s.Name(), Task: k.Task, Attempt: k.Attempt})
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
	route := splitter.Route{Shuffle: sh.ID(), Epoch: rt.Epoch, Task: k.Task, Attempt: k.Attempt, Dests: sh.Members,
		Primary: rt.GroupOf, Backups: backupGroups(rt, len(sh.Members))}
	if sh.Array == nil {
		route.Holders = &splitter.Holders{Owner: rt.GroupOf, Backup: rt.BackupOf} // row sums for the receivers' replay checks
	}
	if r.Since > 0 && !sh.Spec.ReplayWhole() { // with replay_whole a replay sends every partition its rows
		if err := sh.sendOnlyMoved(&route, rt, r.Since-1); err != nil {
			return PutResult{}, err
		}
	}
	p := &putter{s: s, sh: sh, rt: rt, k: k, cut: s.split.NewCut(route)}
	defer p.cut.Close()
	expected() // the Cut counts itself
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
func backupGroups(rt *shuffle.Route, n int) []int {
	if rt.BackupOf == nil {
		return nil
	}
	out := make([]int, len(rt.BackupOf))
	for p, b := range rt.BackupOf {
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
func (sh *Shuffle) sendOnlyMoved(r *splitter.Route, rt *shuffle.Route, since uint64) error {
	if since >= rt.Epoch {
		return fmt.Errorf("%w: shuffle %s task %d attempt %d replays epoch %d, not older than %d",
			ErrBadInput, sh.ID(), r.Task, r.Attempt, since, rt.Epoch)
	}
	prev, err := sh.RouteFor(rt.Lost[:since])
	if err != nil {
		return err
	}
	none := len(sh.Members)
	r.Primary = slices.Clone(r.Primary)
	for part, dest := range r.Primary {
		if prev.Holds(part, dest) {
			r.Primary[part] = none
		}
		if r.Backups != nil && prev.Holds(part, r.Backups[part]) {
			r.Backups[part] = none
		}
	}
	return nil
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
	s   *Runner
	sh  *Shuffle
	rt  *shuffle.Route // the epoch the attempt runs in
	k   shuffle.AttemptKey
	cut *splitter.Cut
}

// frame is how this shuffle's record batches are cut.
func (p *putter) frame() splitter.Frame {
	return splitter.Frame{Partitioner: p.sh.Part, Codec: p.sh.Codec}
}

// feed reads every record of the input and sends its rows.
func (p *putter) feed(ctx context.Context, next func() (arrow.Record, error)) error {
	f := p.frame()
	h := p.s.inputs.Hold()
	defer h.Release()
	for {
		rec, err := h.Read(ctx, next)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("shuffle %s task %d attempt %d: reading input: %w", p.sh.ID(), p.k.Task, p.k.Attempt, err)
		}
		if err := p.sh.checkSchema(p.k.Task, rec.Schema()); err != nil {
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
	if err := p.cut.End(ctx, p.rt.Live); err != nil {
		return err
	}
	return p.reportDone(ctx)
}

// reportDone tells the coordinator what the attempt sent to each receiver.
func (p *putter) reportDone(ctx context.Context) error {
	c := control.Msg{Op: control.OpDone, Shuffle: p.sh.ID(), Epoch: p.rt.Epoch, Node: p.s.Name(), Task: p.k.Task, Attempt: p.k.Attempt, Sent: p.cut.Sent(p.rt.Live)}
	p.sh.finished(&c)
	return control.Retry(ctx, 5, func() error { _, err := p.s.reportTask(ctx, p.sh, c); return err })
}

// result sums what was sent.
func (p *putter) result() PutResult {
	rows, bytes := p.cut.Totals()
	return PutResult{Rows: rows, Bytes: bytes}
}
