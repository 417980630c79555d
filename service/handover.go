package service

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/wire"
)

// The handover of a draining node (recovery.PlanHandOver decides whether a
// shuffle needs one): the node asks the shuffle's coordinator to move the
// epoch without it as a planned departure (control.OpHandOver), reads out
// the committed pieces of each output partition it held (receiver.Export)
// and sends them to the partition's new owner in handover frames, which
// the owner stores and commits under their original keys
// (receiver.Adopt), then tells the coordinator it finished
// (control.OpHandedOver). The coordinator holds the seal until then, and
// falls back to the loss path if the node says the copy failed or is lost
// before it says anything.

// typeHandOver is the frame type of a handover message: the body of a
// shards frame (shard.Msg) whose entries are each one committed piece of
// one partition, every piece of one (task, attempt, partition) in one
// message. Frame types 16..63 are the service's own (package wire).
const typeHandOver wire.Type = 16

// handOverBatch is about the most bytes of one handover message: a
// (task, attempt, partition) larger than this goes alone.
const handOverBatch = 4 << 20

// handOverTries bounds the tries of one handover request (busy replies
// and transport errors are retried, refusals are final).
const handOverTries = 12

// handOverWatch is how often a coordinator checks that a node handing
// over is still a member.
const handOverWatch = 100 * time.Millisecond

// handOver makes sure the data shuffle id keeps on this node survives its
// departure without a replay: nothing to do when the shuffle is gone or
// failed, when this node holds none of its partitions, or when it is
// replicated and no member is lost yet (each partition's backup holds a
// copy and serves it in the next epoch, as after a loss); otherwise the
// node copies its partitions to their next owners (copyShuffle). A
// shuffle it cannot hand over returns an error wrapping errNoHandover.
func (s *Service) handOver(ctx context.Context, id string) error {
	sh, err := s.lookup(id)
	if err != nil {
		return nil // freed since: nothing held
	}
	ph, _ := sh.Status()
	rt := sh.Route()
	mode := recovery.PlanHandOver(recovery.HandOverFacts{
		Gone: ph == Failed, Holds: !rt.Held.Empty(), Replicated: sh.Spec.Replicated(), Lost: len(rt.Lost),
		Coordinates: rt.Coordinator == s.Name(), Copyable: sh.Spec.Kind == spec.Dataframe,
	})
	switch mode {
	case recovery.HandNothing:
		return nil
	case recovery.HandRefuse:
		return fmt.Errorf("%w: shuffle %s: node %s holds %d partitions and coordinates it (%v) or it is an array rechunk",
			errNoHandover, id, s.Name(), rt.Held.Count(), rt.Coordinator == s.Name())
	}
	err = s.copyShuffle(ctx, sh)
	s.endHandOver(ctx, sh, err)
	return err
}

// copyShuffle moves sh's epoch without this node and copies every output
// partition it held to the partition's owner in the new epoch.
func (s *Service) copyShuffle(ctx context.Context, sh *entry) error {
	old := sh.Route()
	s.flushCommits(ctx, sh)
	next, err := s.askHandOver(ctx, sh, old)
	if err != nil {
		return err
	}
	start := time.Now()
	var bytes int64
	for to, parts := range handOverTargets(sh, old, next) {
		n, err := s.copyTo(ctx, sh, next.Epoch, to, parts)
		bytes += n
		if err != nil {
			return fmt.Errorf("shuffle %s: handing partitions to node %s: %w", sh.ID(), to, err)
		}
		if f := s.drain.copied.Load(); f != nil {
			(*f)(sh.ID(), to)
		}
	}
	s.drain.handedBytes.Add(bytes)
	s.log.Info("handed over", "shuffle", sh.ID(), "epoch", next.Epoch, "bytes", bytes, "took", time.Since(start))
	return nil
}

// askHandOver asks sh's coordinator to move to the epoch without this
// node, and returns that epoch's route.
func (s *Service) askHandOver(ctx context.Context, sh *entry, old *shuffle.Route) (*shuffle.Route, error) {
	next, err := sh.RouteFor(append(slices.Clone(old.Lost), s.Name()))
	if err != nil {
		return nil, err
	}
	c := control.Msg{Op: control.OpHandOver, Shuffle: sh.ID(), Node: s.Name()}
	var r control.Reply
	err = control.Retry(ctx, handOverTries, func() (err error) {
		r, err = s.request(ctx, old.Coordinator, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.Epoch != next.Epoch {
		return nil, fmt.Errorf("shuffle %s: the coordinator moved to epoch %d for the handover of node %s, want %d", sh.ID(), r.Epoch, s.Name(), next.Epoch)
	}
	return next, nil
}

// handOverTargets groups the partitions this node held in old by their
// owner in next. A replicated partition whose owner did not change (this
// node backed it up) has a copy there already.
func handOverTargets(sh *entry, old, next *shuffle.Route) map[string][]uint32 {
	out := map[string][]uint32{}
	old.Held.ForEach(func(p int) bool {
		if old.BackupOf == nil || next.GroupOf[p] != old.GroupOf[p] {
			to := sh.Members[next.GroupOf[p]]
			out[to] = append(out[to], uint32(p))
		}
		return true
	})
	return out
}

// copyTo sends the committed pieces of parts to node to, in messages of
// about handOverBatch bytes that never split a (task, attempt), and
// returns the bytes sent.
func (s *Service) copyTo(ctx context.Context, sh *entry, epoch uint64, to string, parts []uint32) (int64, error) {
	b := &handOverBatcher{s: s, sh: sh, to: to, m: shard.Msg{Shuffle: sh.ID(), Epoch: epoch}}
	for _, p := range parts {
		if err := s.recv.Export(ctx, sh.recv, p, func(e shard.Entry, sum shard.PartSum) error { return b.add(ctx, e, sum) }); err != nil {
			return b.sent, err
		}
	}
	return b.sent, b.flush(ctx)
}

// handOverBatcher gathers the entries of one handover message.
type handOverBatcher struct {
	s     *Service
	sh    *entry
	to    string
	m     shard.Msg
	bytes int
	sent  int64
}

// add appends e, first sending the message if it is full and e starts
// another (task, attempt, partition), whose end marker carries sum.
func (b *handOverBatcher) add(ctx context.Context, e shard.Entry, sum shard.PartSum) error {
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
func (b *handOverBatcher) flush(ctx context.Context) error {
	if len(b.m.Entries) == 0 {
		return nil
	}
	body := shard.AppendMsg(nil, &b.m)
	err := control.Retry(ctx, handOverTries, func() error {
		_, err := b.s.net.Request(ctx, b.to, typeHandOver, body)
		return err
	})
	if err != nil {
		return peerError(b.sh.ID(), b.to, err)
	}
	b.sent += int64(b.bytes)
	b.m.Entries, b.m.Ends, b.bytes = b.m.Entries[:0], b.m.Ends[:0], 0
	return nil
}

// endHandOver tells sh's coordinator that this node's handover ended,
// with why it failed if err is not nil, even when ctx has ended (the
// drain's deadline passed): the coordinator falls back at once instead of
// when it sees the node gone.
func (s *Service) endHandOver(ctx context.Context, sh *entry, err error) {
	c := control.Msg{Op: control.OpHandedOver, Shuffle: sh.ID(), Node: s.Name()}
	if err != nil {
		c.Reason = err.Error()
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	co := sh.Route().Coordinator
	rerr := control.Retry(tctx, 4, func() error { _, err := s.request(tctx, co, c); return err })
	if rerr != nil {
		s.log.Warn("telling the coordinator the handover ended", "shuffle", sh.ID(), "peer", co, "failed", err != nil, "err", rerr)
	}
}

// flushCommits waits until the commit reports this node queued for sh
// reached the coordinator (or ctx ends): the coordinator then knows which
// of the data here is committed, and replays none of it.
func (s *Service) flushCommits(ctx context.Context, sh *entry) {
	for s.reports.CommitsBusy(sh.State) && ctx.Err() == nil {
		s.drainWait(ctx)
	}
}

// handleHandOver adopts a handover message (see typeHandOver).
func (s *Service) handleHandOver(ctx context.Context, b []byte) error {
	m, err := shard.Decode(b)
	if err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	sh, err := s.lookup(m.Shuffle)
	if err != nil {
		return shuffle.Refuse(wire.RefuseUnknownShuffle, err)
	}
	a, err := s.recv.Adopt(ctx, sh.recv, m)
	s.drain.adoptedBytes.Add(a.Bytes)
	if err == nil {
		s.log.Debug("adopted handed-over pieces", "shuffle", m.Shuffle, "entries", a.Entries, "dropped", a.Dropped, "bytes", a.Bytes)
	}
	return err
}

// answerHandOver handles control.OpHandOver and control.OpHandedOver on
// sh's coordinator co.
func (s *Service) answerHandOver(sh *entry, co *coordinator.Shuffle, c *control.Msg) (control.Reply, error) {
	if c.Op == control.OpHandedOver {
		s.coord.HandOverEnd(co, c.Node, c.Reason == "", c.Reason)
		return control.Reply{Status: control.StatusOK}, nil
	}
	m, err := s.coord.HandOver(s.ctx, co, c.Node)
	if err != nil {
		return control.Reply{}, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	s.publish(sh.State)
	s.watchHandOver(co, c.Node)
	return control.Reply{Status: control.StatusOK, Epoch: m.Epoch}, nil
}

// watchHandOver falls back to the loss path for node's handover of co if
// node stops being a member before it says the handover ended.
func (s *Service) watchHandOver(co *coordinator.Shuffle, node string) {
	s.background(func(ctx context.Context) {
		t := time.NewTicker(handOverWatch)
		defer t.Stop()
		for s.coord.Handing(co, node) {
			if !s.isMember(node) {
				s.coord.HandOverEnd(co, node, false, "node lost while handing over")
				return
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})
}

// isMember reports whether node is a live member of the cluster now.
func (s *Service) isMember(node string) bool {
	return slices.ContainsFunc(s.net.Members(), func(m member.Member) bool { return m.Name == node })
}
