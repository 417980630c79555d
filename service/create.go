package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/create"
	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Create validates sp and creates the shuffle on every live member, with this
// node as its coordinator. It returns once every member has it. A spec with
// CoPartition shares the ownership of that shuffle, which this node must
// hold (package create pins it).
//
// The caps are checked before anything is planned; each member (this node
// among them) plans the spec once, when it installs it, and this node
// installs it first, so a spec that does not plan is refused here before
// any other member spends on it.
func (s *Service) Create(ctx context.Context, sp *spec.Spec) error {
	sp, pin, err := s.plans.Plan(sp)
	if err != nil {
		return err
	}
	c := control.Msg{Op: control.OpCreate, Shuffle: sp.ID, Spec: sp, Coordinator: s.Name(), Members: pin.Members, Lost: pin.Lost}
	if err := s.createOn(ctx, pin.Live, c); err != nil {
		s.undoCreate(context.WithoutCancel(ctx), pin.Live, sp.ID)
		return fmt.Errorf("service: create shuffle %s: %w", sp.ID, err)
	}
	if sh, err := s.lookup(sp.ID); err == nil {
		s.publish(sh.State)
	}
	s.log.Info("shuffle created", "shuffle", sp.ID, "tasks", sp.Tasks, "partitions", sp.Partitions,
		"members", len(pin.Live), "epoch", len(pin.Lost), "co_partition", sp.CoPartition)
	return nil
}

// createOn installs c on this node, if it is among live, and then on the
// other members of live.
func (s *Service) createOn(ctx context.Context, live []string, c control.Msg) error {
	if !slices.Contains(live, s.Name()) {
		return s.broadcast(ctx, live, c)
	}
	if _, err := s.request(ctx, s.Name(), c); err != nil {
		return err
	}
	others := slices.DeleteFunc(slices.Clone(live), func(n string) bool { return n == s.Name() })
	return s.broadcast(ctx, others, c)
}

// undoCreate removes, from the members of live, the shuffle this node
// failed to create, and only where this node created it: the close names
// this node as creator, and a member whose shuffle another node created
// keeps it. Two creates of one ID racing on two nodes then never remove
// each other's shuffle: a member that already held the other's refused
// this one (ErrExists), and each undoes only its own installs, so a
// create that succeeded everywhere stays whole.
func (s *Service) undoCreate(ctx context.Context, live []string, id string) {
	_ = s.broadcast(ctx, live, control.Msg{Op: control.OpClose, Shuffle: id, Coordinator: s.Name()})
}

// closeFrom handles control.OpClose: a client's close (no creator named)
// drops the shuffle; a failed create's undo drops it only if the node it
// names created it here.
func (s *Service) closeFrom(c *control.Msg) error {
	if c.Coordinator != "" {
		sh, err := s.lookup(c.Shuffle)
		if err != nil || sh.Creator != c.Coordinator {
			return nil
		}
	}
	return s.drop(c.Shuffle)
}

// newPlanner builds the planner of this node's creates.
func (s *Service) newPlanner() *create.Planner {
	return create.New(create.Config{Node: s.Name, Caps: s.caps, Members: s.memberNames,
		Held: s.shuffles.Len,
		Lookup: func(id string) (*shuffle.State, error) {
			sh, err := s.lookup(id)
			if err != nil {
				return nil, err
			}
			return sh.State, nil
		},
		Closed: ErrClosed, Exists: ErrExists, Unavailable: ErrUnavailable})
}

// memberNames are the live members' names.
func (s *Service) memberNames() []string {
	var names []string
	for _, m := range s.net.Members() {
		names = append(names, m.Name)
	}
	return names
}

// install handles control.OpCreate: build the shuffle's state on this node.
func (s *Service) install(c *control.Msg) error {
	if err := s.plans.CheckInstall(c); err != nil {
		return err
	}
	sh, err := s.newEntry(c.Spec, c.Coordinator, c.Members, c.Lost)
	if err != nil {
		return fmt.Errorf("%w: create %s on node %s: %w", ErrBadInput, c.Shuffle, s.Name(), err)
	}
	if c.Coordinator == s.Name() {
		co, err := coordinator.NewShuffle(sh.State)
		if err != nil {
			return err
		}
		sh.SetCoordPart(co)
	}
	_, exists, err := s.shuffles.Add(c.Shuffle, sh, func(held int) error { return s.caps().CheckOpen(c.Shuffle, held) })
	if exists {
		return fmt.Errorf("%w: %s on node %s", ErrExists, c.Shuffle, s.Name())
	}
	return err
}

// CloseShuffle frees the shuffle on every member. Closing an unknown shuffle
// on some member is not an error: close is idempotent.
func (s *Service) CloseShuffle(ctx context.Context, id string) error {
	return s.broadcast(ctx, s.memberNames(), control.Msg{Op: control.OpClose, Shuffle: id})
}

// drop frees a shuffle on this node: its client closed it.
func (s *Service) drop(id string) error { return s.dropAs(id, closedReason, false) }

// closedReason is the tombstone of a shuffle its client closed.
const closedReason = "closed"

// dropAs frees a shuffle on this node; reason says why it is gone to
// later calls that name it. left: the shuffle goes on without this node,
// and calls about it are answered ErrUnavailable (ask another node), not
// ErrUnknownShuffle.
func (s *Service) dropAs(id, reason string, left bool) error {
	sh, ok := s.shuffles.Drop(id, reason, left)
	if !ok {
		return nil
	}
	sh.Finish(Failed, errors.New(reason))
	s.split.Drop(id)
	sh.recv.Close() // no receive stores data after the drop below
	if sh.recv.OffheapBytes() >= offheap.RegionBytes {
		s.collectSoon()
	}
	return s.store.DropShuffle(id)
}

// collectSoon runs a garbage collection in the background, unless one it
// started still runs. A dropped shuffle's arenas are freed by the
// collector's cleanup (see offheap): without this, that memory would stay
// mapped, and out of the node's region pool, until the next collection,
// which on an idle node may be minutes away. A collection costs little
// here: the shuffle's bulk is off the Go heap.
func (s *Service) collectSoon() {
	if !s.collecting.CompareAndSwap(false, true) {
		return
	}
	s.background(func(context.Context) {
		defer s.collecting.Store(false)
		runtime.GC()
	})
}
