package reports

import (
	"context"

	"github.com/shufflenode/shufflenode/control"
)

// Abort asks coordinator, in the background, to fail shuffle id for err,
// which this node cannot get past (its spill disk failed): senders would
// otherwise retry their puts against it without end. The coordinator
// tells every member (control.OpAbort, coordinator.AbortFrom); the
// client's barrier and puts then fail with err, and closing the shuffle
// frees what it wrote. The caller asks once per shuffle.
func (r *Reporter) Abort(id, coordinator string, err error) {
	r.cfg.Log.Error("shuffle cannot go on on this node: asking its coordinator to fail it", "shuffle", id, "err", err)
	c := control.Msg{Op: control.OpAbort, Shuffle: id, Node: r.cfg.Node, Reason: err.Error()}
	r.cfg.Go(func(ctx context.Context) {
		rerr := control.Retry(ctx, 8, func() error { _, err := r.cfg.Request(ctx, coordinator, c); return err })
		if rerr != nil {
			r.cfg.Log.Error("asking the coordinator to fail the shuffle failed", "shuffle", id, "err", rerr)
		}
	})
}
