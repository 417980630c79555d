package drain

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/wire"
)

// TypeHandOver is the frame type of a handover message: the body of a
// shards frame (shard.Msg) whose entries are each one committed piece of
// one partition, every piece of one (task, attempt, partition) in one
// message. Frame types 16..63 are the node's own (package wire).
const TypeHandOver wire.Type = 16

// handOverBatch is about the most bytes of one handover message: a
// (task, attempt, partition) larger than this goes alone.
const handOverBatch = 4 << 20

// handOverTries bounds the tries of one handover request (busy replies
// and transport errors are retried, refusals are final).
const handOverTries = 12

// handOver makes sure the data shuffle id keeps on this node survives its
// departure without a replay: nothing to do when the shuffle is gone or
// failed, when this node holds none of its partitions, or when it is
// replicated and no member is lost yet (each partition's backup holds a
// copy and serves it in the next epoch, as after a loss); otherwise the
// node copies its partitions to their next owners (copyShuffle). A
// shuffle it cannot hand over returns an error wrapping errNoHandover.
func (d *Drainer) handOver(ctx context.Context, id string) error {
	st, rs, err := d.cfg.Host.Lookup(id)
	if err != nil {
		return nil // freed since: nothing held
	}
	self := d.cfg.Host.Name()
	ph, _ := st.Status()
	rt := st.Route()
	mode := recovery.PlanHandOver(recovery.HandOverFacts{
		Gone: ph == shuffle.Failed, Holds: !rt.Held.Empty(), Replicated: st.Spec.Replicated(), Lost: len(rt.Lost),
		Coordinates: rt.Coordinator == self, Copyable: st.Spec.Kind == spec.Dataframe,
	})
	switch mode {
	case recovery.HandNothing:
		return nil
	case recovery.HandRefuse:
		return fmt.Errorf("%w: shuffle %s: node %s holds %d partitions and coordinates it (%v) or it is an array rechunk",
			errNoHandover, id, self, rt.Held.Count(), rt.Coordinator == self)
	}
	err = d.copyShuffle(ctx, st, rs)
	d.endHandOver(ctx, st, err)
	return err
}

// copyShuffle moves st's epoch without this node and copies every output
// partition it held to the partition's owner in the new epoch.
func (d *Drainer) copyShuffle(ctx context.Context, st *shuffle.State, rs *receiver.Shuffle) error {
	old := st.Route()
	d.flushCommits(ctx, st)
	next, err := d.askHandOver(ctx, st, old)
	if err != nil {
		return err
	}
	start := time.Now()
	var bytes int64
	for to, parts := range handOverTargets(st, old, next) {
		n, err := d.copyTo(ctx, st, rs, next.Epoch, to, parts)
		bytes += n
		if err != nil {
			return fmt.Errorf("shuffle %s: handing partitions to node %s: %w", st.ID(), to, err)
		}
		if f := d.copied.Load(); f != nil {
			(*f)(st.ID(), to)
		}
	}
	d.handedBytes.Add(bytes)
	d.cfg.Host.Log().Info("handed over", "shuffle", st.ID(), "epoch", next.Epoch, "bytes", bytes, "took", time.Since(start))
	return nil
}

// askHandOver asks st's coordinator to move to the epoch without this
// node, and returns that epoch's route.
func (d *Drainer) askHandOver(ctx context.Context, st *shuffle.State, old *shuffle.Route) (*shuffle.Route, error) {
	self := d.cfg.Host.Name()
	next, err := st.RouteFor(append(slices.Clone(old.Lost), self))
	if err != nil {
		return nil, err
	}
	c := control.Msg{Op: control.OpHandOver, Shuffle: st.ID(), Node: self}
	var r control.Reply
	err = control.Retry(ctx, handOverTries, func() (err error) {
		r, err = d.cfg.Host.Request(ctx, old.Coordinator, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.Epoch != next.Epoch {
		return nil, fmt.Errorf("shuffle %s: the coordinator moved to epoch %d for the handover of node %s, want %d", st.ID(), r.Epoch, self, next.Epoch)
	}
	return next, nil
}

// handOverTargets groups the partitions this node held in old by their
// owner in next. A replicated partition whose owner did not change (this
// node backed it up) has a copy there already.
func handOverTargets(st *shuffle.State, old, next *shuffle.Route) map[string][]uint32 {
	out := map[string][]uint32{}
	old.Held.ForEach(func(p int) bool {
		if old.BackupOf == nil || next.GroupOf[p] != old.GroupOf[p] {
			to := st.Members[next.GroupOf[p]]
			out[to] = append(out[to], uint32(p))
		}
		return true
	})
	return out
}

// copyTo sends the committed pieces of parts to node to, in messages of
// about handOverBatch bytes that never split a (task, attempt), and
// returns the bytes sent.
func (d *Drainer) copyTo(ctx context.Context, st *shuffle.State, rs *receiver.Shuffle, epoch uint64, to string, parts []uint32) (int64, error) {
	b := &batcher{d: d, to: to, m: shard.Msg{Shuffle: st.ID(), Epoch: epoch}}
	for _, p := range parts {
		if err := d.cfg.Receiver.Export(ctx, rs, p, func(e shard.Entry, sum shard.PartSum) error { return b.add(ctx, e, sum) }); err != nil {
			return b.sent, err
		}
	}
	return b.sent, b.flush(ctx)
}

// batcher gathers the entries of one handover message.
type batcher struct {
	d     *Drainer
	to    string
	m     shard.Msg
	bytes int
	sent  int64
}

// add appends e, first sending the message if it is full and e starts
// another (task, attempt, partition), whose end marker carries sum.
func (b *batcher) add(ctx context.Context, e shard.Entry, sum shard.PartSum) error {
	n := len(b.m.Entries)
	fresh := n == 0 || !sameGroup(&b.m.Entries[n-1], &e)
	if fresh && b.bytes >= handOverBatch {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	if fresh {
		b.m.Ends = append(b.m.Ends, shard.End{Task: e.Task, Attempt: e.Attempt, Sums: []shard.PartSum{sum}})
	}
	b.m.Entries = append(b.m.Entries, e)
	b.bytes += len(e.Data)
	return nil
}

// sameGroup reports whether a and b are pieces of one (task, attempt,
// partition).
func sameGroup(a, b *shard.Entry) bool {
	return a.Task == b.Task && a.Attempt == b.Attempt && a.Runs[0].Partition == b.Runs[0].Partition
}

// flush sends the gathered entries, if any.
func (b *batcher) flush(ctx context.Context) error {
	if len(b.m.Entries) == 0 {
		return nil
	}
	body := shard.AppendMsg(nil, &b.m)
	err := control.Retry(ctx, handOverTries, func() error {
		return b.d.cfg.Host.Send(ctx, b.to, TypeHandOver, body)
	})
	if err != nil {
		return b.d.cfg.PeerError(b.m.Shuffle, b.to, err)
	}
	b.sent += int64(b.bytes)
	b.m.Entries, b.m.Ends, b.bytes = b.m.Entries[:0], b.m.Ends[:0], 0
	return nil
}

// endHandOver tells st's coordinator that this node's handover ended,
// with why it failed if err is not nil, even when ctx has ended (the
// drain's deadline passed): the coordinator falls back at once instead of
// when it sees the node gone.
func (d *Drainer) endHandOver(ctx context.Context, st *shuffle.State, err error) {
	h := d.cfg.Host
	c := control.Msg{Op: control.OpHandedOver, Shuffle: st.ID(), Node: h.Name()}
	if err != nil {
		c.Reason = err.Error()
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	co := st.Route().Coordinator
	rerr := control.Retry(tctx, 4, func() error { _, err := h.Request(tctx, co, c); return err })
	if rerr != nil {
		h.Log().Warn("telling the coordinator the handover ended", "shuffle", st.ID(), "peer", co, "failed", err != nil, "err", rerr)
	}
}

// flushCommits waits until the commit reports this node queued for st
// reached the coordinator (or ctx ends): the coordinator then knows which
// of the data here is committed, and replays none of it.
func (d *Drainer) flushCommits(ctx context.Context, st *shuffle.State) {
	for d.cfg.Host.CommitsBusy(st) && ctx.Err() == nil {
		wait(ctx)
	}
}
