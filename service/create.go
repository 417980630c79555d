package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/offheap"
	"github.com/shufflenode/shufflenode/spec"
)

// Create validates sp and creates the shuffle on every live member, with this
// node as its coordinator. It returns once every member has it. A spec with
// CoPartition shares the ownership of that shuffle, which this node must
// hold (see pinLike).
//
// The caps are checked before anything is planned; each member (this node
// among them) plans the spec once, when it installs it, and this node
// installs it first, so a spec that does not plan is refused here before
// any other member spends on it.
func (s *Service) Create(ctx context.Context, sp *spec.Spec) error {
	if err := s.caps().CheckSpec(sp); err != nil {
		return err
	}
	if _, err := sp.Precheck(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if _, err := s.lookup(sp.ID); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, sp.ID)
	}
	s.mu.RLock()
	held := len(s.shuffles)
	s.mu.RUnlock()
	if err := s.caps().CheckOpen(sp.ID, held); err != nil {
		return err
	}
	sp, pin, err := s.pin(sp)
	if err != nil {
		return err
	}
	c := control.Msg{Op: control.OpCreate, Shuffle: sp.ID, Spec: sp, Coordinator: s.Name(), Members: pin.members, Lost: pin.lost}
	if err := s.createOn(ctx, pin.live, c); err != nil {
		s.undoCreate(context.WithoutCancel(ctx), pin.live, sp.ID)
		return fmt.Errorf("service: create shuffle %s: %w", sp.ID, err)
	}
	if sh, err := s.lookup(sp.ID); err == nil {
		s.publish(sh.State)
	}
	s.log.Info("shuffle created", "shuffle", sp.ID, "tasks", sp.Tasks, "partitions", sp.Partitions,
		"members", len(pin.live), "epoch", len(pin.lost), "co_partition", sp.CoPartition)
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

// pinned is the member view a new shuffle starts from.
type pinned struct {
	members []string // pinned members: the ownership map is computed over them
	lost    []string // members already lost, in order (the starting epoch is len(lost))
	live    []string // members not lost: each gets the shuffle
}

// pin returns the spec to create and the members it pins: the live members
// as this node sees them, or those of the shuffle it is co-partitioned with.
func (s *Service) pin(sp *spec.Spec) (*spec.Spec, pinned, error) {
	if sp.CoPartition != "" {
		return s.pinLike(sp)
	}
	var members []string
	for _, m := range s.net.Members() {
		members = append(members, m.Name)
	}
	return sp, pinned{members: members, live: members}, nil
}

// pinLike pins what shuffle sp.CoPartition has now: its members, the members
// it lost so far and its seed, so both ownership maps are the same,
// partition for partition, whatever joined or left since it was created.
// Later losses move both shuffles the same way (ownership depends only on
// seed, members and the lost set). The returned spec is a copy with the
// other's seed.
func (s *Service) pinLike(sp *spec.Spec) (*spec.Spec, pinned, error) {
	other, err := s.lookup(sp.CoPartition)
	if errors.Is(err, ErrClosed) {
		return nil, pinned{}, err
	}
	if err != nil {
		return nil, pinned{}, fmt.Errorf("%w: shuffle %s: co_partition %s: no such shuffle on node %s (create it on a node that holds it)",
			ErrBadInput, sp.ID, sp.CoPartition, s.Name())
	}
	if err := coPartitionable(sp, other); err != nil {
		return nil, pinned{}, err
	}
	rt := other.Route()
	if err := s.present(sp, rt.Live); err != nil {
		return nil, pinned{}, err
	}
	cp := *sp
	cp.OwnershipSeed = other.Spec.Seed()
	return &cp, pinned{members: other.Members, lost: rt.Lost, live: rt.Live}, nil
}

// coPartitionable checks that sp can share other's ownership map.
func coPartitionable(sp *spec.Spec, other *entry) error {
	o := other.Spec
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shuffle %s: co_partition %s: %s", ErrBadInput, sp.ID, o.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case sp.Partitions != o.Partitions:
		return bad("%d partitions, but %s has %d", sp.Partitions, o.ID, o.Partitions)
	case sp.Replicated() != o.Replicated():
		return bad("replication %d, but %s has %d (placement after a loss would differ)", max(sp.Replication, 1), o.ID, max(o.Replication, 1))
	case sp.OwnershipSeed != "" && sp.OwnershipSeed != o.Seed():
		return bad("ownership_seed %q, but %s has seed %q", sp.OwnershipSeed, o.ID, o.Seed())
	}
	if ph, err := other.Status(); ph == Failed {
		return bad("%s failed: %v", o.ID, err)
	}
	return nil
}

// present checks that every member to pin is still a member: one that left
// but is not lost in the other shuffle yet (its coordinator is applying the
// loss) would never be lost in the new one.
func (s *Service) present(sp *spec.Spec, live []string) error {
	now := map[string]bool{}
	for _, m := range s.net.Members() {
		now[m.Name] = true
	}
	for _, n := range live {
		if !now[n] {
			return fmt.Errorf("%w: shuffle %s: co_partition %s: node %s left and %s has not moved past it yet: create again shortly",
				ErrUnavailable, sp.ID, sp.CoPartition, n, sp.CoPartition)
		}
	}
	return nil
}

// install handles control.OpCreate: build the shuffle's state on this node.
func (s *Service) install(c *control.Msg) error {
	if c.Spec == nil || c.Spec.ID != c.Shuffle {
		return fmt.Errorf("%w: create %s without a matching spec", ErrBadInput, c.Shuffle)
	}
	if err := s.caps().CheckSpec(c.Spec); err != nil {
		return err
	}
	if slices.Contains(c.Lost, s.Name()) {
		return fmt.Errorf("%w: create %s: node %s is among the lost members %v", ErrBadInput, c.Shuffle, s.Name(), c.Lost)
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.shuffles[c.Shuffle]; ok {
		return fmt.Errorf("%w: %s on node %s", ErrExists, c.Shuffle, s.Name())
	}
	if err := s.caps().CheckOpen(c.Shuffle, len(s.shuffles)); err != nil {
		return err
	}
	s.shuffles[c.Shuffle] = sh
	return nil
}

// CloseShuffle frees the shuffle on every member. Closing an unknown shuffle
// on some member is not an error: close is idempotent.
func (s *Service) CloseShuffle(ctx context.Context, id string) error {
	var members []string
	for _, m := range s.net.Members() {
		members = append(members, m.Name)
	}
	return s.broadcast(ctx, members, control.Msg{Op: control.OpClose, Shuffle: id})
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
	s.mu.Lock()
	sh, ok := s.shuffles[id]
	delete(s.shuffles, id)
	switch {
	case ok && left:
		s.gone.addLeft(id, reason)
	case ok || s.gone.left[id]: // a shuffle that went on without this node may end later
		s.gone.add(id, reason)
		delete(s.gone.left, id)
	}
	s.mu.Unlock()
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
