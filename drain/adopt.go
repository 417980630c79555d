package drain

import (
	"context"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// handOverWatch is how often a coordinator checks that a node handing
// over is still a member.
const handOverWatch = 100 * time.Millisecond

// HandleFrame adopts a handover message (see TypeHandOver) on the new
// owner of its partitions. It refuses one it cannot decode, or of a
// shuffle this node does not hold.
func (d *Drainer) HandleFrame(ctx context.Context, b []byte) error {
	m, err := shard.Decode(b)
	if err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	_, rs, err := d.cfg.Host.Lookup(m.Shuffle)
	if err != nil {
		return shuffle.Refuse(wire.RefuseUnknownShuffle, err)
	}
	a, err := d.cfg.Receiver.Adopt(ctx, rs, m)
	d.adoptedBytes.Add(a.Bytes)
	if err == nil {
		d.cfg.Host.Log().Debug("adopted handed-over pieces", "shuffle", m.Shuffle, "entries", a.Entries, "dropped", a.Dropped, "bytes", a.Bytes)
	}
	return err
}

// Answer handles control.OpHandOver and control.OpHandedOver on st's
// coordinator co. ctx bounds the epoch move (the node's lifetime, not the
// request's).
func (d *Drainer) Answer(ctx context.Context, st *shuffle.State, co *coordinator.Shuffle, c *control.Msg) (control.Reply, error) {
	cd := d.cfg.Coordinator()
	if c.Op == control.OpHandedOver {
		cd.HandOverEnd(co, c.Node, c.Reason == "", c.Reason)
		return control.Reply{Status: control.StatusOK}, nil
	}
	m, err := cd.HandOver(ctx, co, c.Node)
	if err != nil {
		return control.Reply{}, shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	d.cfg.Host.Publish(st)
	d.watch(cd, co, c.Node)
	return control.Reply{Status: control.StatusOK, Epoch: m.Epoch}, nil
}

// watch falls back to the loss path for node's handover of co if node
// stops being a member before it says the handover ended.
func (d *Drainer) watch(cd Coordinator, co *coordinator.Shuffle, node string) {
	d.cfg.Host.Go(func(ctx context.Context) {
		t := time.NewTicker(handOverWatch)
		defer t.Stop()
		for cd.Handing(co, node) {
			if !d.cfg.Host.IsMember(node) {
				cd.HandOverEnd(co, node, false, "node lost while handing over")
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
