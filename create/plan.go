package create

import (
	"errors"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
)

// Config is what a Planner needs of its node. Every field is required.
type Config struct {
	// Node is the node's name.
	Node func() string
	// Caps are the limits the node puts on creates.
	Caps func() limits.Caps
	// Members are the live members' names as the node sees them now.
	Members func() []string
	// Held counts the shuffles the node holds.
	Held func() int
	// Lookup returns the shuffle id the node holds, or an error.
	Lookup func(id string) (*shuffle.State, error)
	// Closed is the sentinel of a Lookup on a closed node (returned as
	// is); Exists, of a create whose ID the node holds; Unavailable, of a
	// co-partitioned create to try again shortly.
	Closed, Exists, Unavailable error
}

// Planner plans one node's creates.
type Planner struct{ cfg Config }

// New returns a Planner.
func New(cfg Config) *Planner { return &Planner{cfg: cfg} }

// Pinned is the member view a new shuffle starts from.
type Pinned struct {
	Members []string // pinned members: the ownership map is computed over them
	Lost    []string // members already lost, in order (the starting epoch is len(Lost))
	Live    []string // members not lost: each gets the shuffle
}

// Plan checks sp before it is created from this node: the caps before
// anything is planned, then the plan (spec.Precheck), then that no
// shuffle of its ID is held here and the node may open one more. It
// returns the spec to create (a copy with the other's seed when sp is
// co-partitioned) and the members it pins.
func (p *Planner) Plan(sp *spec.Spec) (*spec.Spec, Pinned, error) {
	caps := p.cfg.Caps()
	if err := caps.CheckSpec(sp); err != nil {
		return nil, Pinned{}, err
	}
	if _, err := sp.Precheck(); err != nil {
		return nil, Pinned{}, fmt.Errorf("%w: %w", shuffle.ErrBadInput, err)
	}
	if _, err := p.cfg.Lookup(sp.ID); err == nil {
		return nil, Pinned{}, fmt.Errorf("%w: %s", p.cfg.Exists, sp.ID)
	}
	if err := caps.CheckOpen(sp.ID, p.cfg.Held()); err != nil {
		return nil, Pinned{}, err
	}
	return p.pin(sp)
}

// pin returns the spec to create and the members it pins: the live members
// as this node sees them, or those of the shuffle it is co-partitioned with.
func (p *Planner) pin(sp *spec.Spec) (*spec.Spec, Pinned, error) {
	if sp.CoPartition != "" {
		return p.pinLike(sp)
	}
	members := p.cfg.Members()
	return sp, Pinned{Members: members, Live: members}, nil
}

// pinLike pins what shuffle sp.CoPartition has now: its members, the members
// it lost so far and its seed, so both ownership maps are the same,
// partition for partition, whatever joined or left since it was created.
// Later losses move both shuffles the same way (ownership depends only on
// seed, members and the lost set). The returned spec is a copy with the
// other's seed.
func (p *Planner) pinLike(sp *spec.Spec) (*spec.Spec, Pinned, error) {
	other, err := p.cfg.Lookup(sp.CoPartition)
	if errors.Is(err, p.cfg.Closed) {
		return nil, Pinned{}, err
	}
	if err != nil {
		return nil, Pinned{}, fmt.Errorf("%w: shuffle %s: co_partition %s: no such shuffle on node %s (create it on a node that holds it)",
			shuffle.ErrBadInput, sp.ID, sp.CoPartition, p.cfg.Node())
	}
	if err := coPartitionable(sp, other); err != nil {
		return nil, Pinned{}, err
	}
	rt := other.Route()
	if err := p.present(sp, rt.Live); err != nil {
		return nil, Pinned{}, err
	}
	cp := *sp
	cp.OwnershipSeed = other.Spec.Seed()
	return &cp, Pinned{Members: other.Members, Lost: rt.Lost, Live: rt.Live}, nil
}

// coPartitionable checks that sp can share other's ownership map.
func coPartitionable(sp *spec.Spec, other *shuffle.State) error {
	o := other.Spec
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: shuffle %s: co_partition %s: %s", shuffle.ErrBadInput, sp.ID, o.ID, fmt.Sprintf(format, args...))
	}
	switch {
	case sp.Partitions != o.Partitions:
		return bad("%d partitions, but %s has %d", sp.Partitions, o.ID, o.Partitions)
	case sp.Replicated() != o.Replicated():
		return bad("replication %d, but %s has %d (placement after a loss would differ)", max(sp.Replication, 1), o.ID, max(o.Replication, 1))
	case sp.OwnershipSeed != "" && sp.OwnershipSeed != o.Seed():
		return bad("ownership_seed %q, but %s has seed %q", sp.OwnershipSeed, o.ID, o.Seed())
	}
	if ph, err := other.Status(); ph == shuffle.Failed {
		return bad("%s failed: %v", o.ID, err)
	}
	return nil
}

// present checks that every member to pin is still a member: one that left
// but is not lost in the other shuffle yet (its coordinator is applying the
// loss) would never be lost in the new one.
func (p *Planner) present(sp *spec.Spec, live []string) error {
	now := map[string]bool{}
	for _, m := range p.cfg.Members() {
		now[m] = true
	}
	for _, n := range live {
		if !now[n] {
			return fmt.Errorf("%w: shuffle %s: co_partition %s: node %s left and %s has not moved past it yet: create again shortly",
				p.cfg.Unavailable, sp.ID, sp.CoPartition, n, sp.CoPartition)
		}
	}
	return nil
}

// CheckInstall checks a create message (control.OpCreate) on a member
// before it builds the shuffle: it carries the spec it names, within the
// node's caps, and does not count this node among the lost.
func (p *Planner) CheckInstall(c *control.Msg) error {
	if c.Spec == nil || c.Spec.ID != c.Shuffle {
		return fmt.Errorf("%w: create %s without a matching spec", shuffle.ErrBadInput, c.Shuffle)
	}
	if err := p.cfg.Caps().CheckSpec(c.Spec); err != nil {
		return err
	}
	if self := p.cfg.Node(); slices.Contains(c.Lost, self) {
		return fmt.Errorf("%w: create %s: node %s is among the lost members %v", shuffle.ErrBadInput, c.Shuffle, self, c.Lost)
	}
	return nil
}
