package guests

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Is reports whether node holds a shuffle pinned to members as a guest:
// it is not one of them.
func Is(node string, members []string) bool { return !slices.Contains(members, node) }

// MayJoin reports whether node may run r's tasks as a guest: it was not a
// member at the create (the record names it neither among its members nor
// among its lost).
func MayJoin(node string, r *record.Record) bool {
	return !slices.Contains(r.Members, node) && !slices.Contains(r.Lost, node)
}

// Config is what a Refresher needs of its node. Every field is required.
type Config struct {
	// Node is the node's name.
	Node string
	// Log is where refreshes are logged.
	Log *slog.Logger
	// Fetch reads shuffle id's record from the cluster's records.
	Fetch func(ctx context.Context, id string) (*record.Record, error)
	// Forget drops what the node's splitter keeps for epochs of shuffle id
	// before epoch.
	Forget func(id string, epoch uint64)
	// Unavailable is the sentinel of a put whose coordinator could not be
	// reached.
	Unavailable error
}

// Refresher moves a node's guests to the epoch of their record.
type Refresher struct{ cfg Config }

// New returns a Refresher.
func New(cfg Config) *Refresher { return &Refresher{cfg: cfg} }

// AfterPut moves guest st to the epoch of its record, if that is newer,
// after a put failed with putErr as stale or unavailable: the epoch moved,
// or a successor took over from a lost coordinator (the epoch's lost list
// names the coordinator), without this node hearing of it. It does
// nothing for a member's shuffle or another error. Errors are logged: the
// next failed put tries again.
func (g *Refresher) AfterPut(ctx context.Context, st *shuffle.State, putErr error) {
	if !errors.Is(putErr, shuffle.ErrStaleEpoch) && !errors.Is(putErr, g.cfg.Unavailable) || !Is(g.cfg.Node, st.Members) {
		return
	}
	r, err := g.cfg.Fetch(ctx, st.ID())
	if err != nil {
		g.cfg.Log.Warn("a guest reading the shuffle's record", "shuffle", st.ID(), "err", err)
		return
	}
	moved, err := moveTo(st, r)
	switch {
	case err != nil:
		g.cfg.Log.Warn("a guest moving to the record's epoch", "shuffle", st.ID(), "epoch", r.Epoch, "err", err)
	case moved:
		g.cfg.Forget(st.ID(), r.Epoch)
		g.cfg.Log.Info("a guest moved to the record's epoch", "shuffle", st.ID(), "epoch", r.Epoch)
	}
}

// moveTo makes the epoch of r current on st, and reopens it, if r's is
// newer.
func moveTo(st *shuffle.State, r *record.Record) (bool, error) {
	st.Lock()
	defer st.Unlock()
	if r.Epoch <= st.RouteLocked().Epoch {
		return false, nil
	}
	rt, err := st.RouteFor(r.Lost)
	if err != nil {
		return false, err
	}
	st.SetRouteLocked(rt)
	st.ReopenLocked()
	return true, nil
}
